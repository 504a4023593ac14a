// The shape of a run (bench/out/results.json), the issue's targets, and the markdown tables printed on stdout (and kept in bench/RESULTS.md).
import { answerCacheMarkdown, type AnswerCacheRow } from "./answer-cache.ts";
import { layoutsMarkdown, type LayoutRun } from "./split-router.ts";
import type { Bundle } from "./router.ts";
import type { LedgerRun, Measured, OpenStreams, Startup } from "./scenarios.ts";
import type { ProbeMix } from "./probe.ts";
import type { ProfileSummary } from "./profile.ts";
import type { PacedRun } from "./paced.ts";
import type { TtfbSplitRow } from "./ttfb-split.ts";
import {
  PEER_COMPARISONS,
  PEER_KINDS,
  PEER_NAMES,
  PORTKEY_STREAM_SLEEP_MS,
  WORKLOAD_SHORT,
  portkeyFigure,
  sleepApplies,
  spread,
  type PeerFigures,
  type PeerRow,
  type PeersRun,
  type Spread,
} from "./peer-gateways.ts";

export type Machine = {
  cpu: string;
  cores: number;
  ram_gb: number;
  os: string;
  node: string;
  workerd: string;
  miniflare: string;
  wrangler: string;
};

export type Comparison = {
  /** router req/s ÷ pass-through req/s */
  throughput_ratio: number;
  /** router − pass-through, ms */
  added_p50_ms: number;
  added_p90_ms: number;
  added_p99_ms: number;
  added_ttfb_p50_ms: number;
  added_ttfb_p99_ms: number;
  /** router ÷ pass-through whole-request (whole-stream) time */
  time_ratio_p50: number;
  time_ratio_p99: number;
};

export type Row = {
  simulator?: Measured;
  passthrough?: Measured;
  floor?: Measured;
  router?: Measured;
  router_vs_passthrough?: Comparison;
  router_vs_floor?: Comparison;
};
/** One floor relay variant (`x-floor-variant`), or a reference Worker, on 2,000-chunk streams at concurrency 1. */
export type FloorVariantRow = { variant: string; chunks: number; measured: Measured };
export type NonStreamRow = Row & { concurrency: number };
export type StreamRow = Row & { chunks: number; concurrency: number };

export type TargetEntry = { name: string; value: number | null; goal: number; op: "<=" | ">="; unit: string; met: boolean; detail: string };

export type Results = {
  generated_at: string;
  mode: "full" | "quick";
  /** Which run of a `--repeat N` set this is (1-based), and N. */
  run?: { index: number; of: number };
  machine: Machine;
  conditions: {
    load_average_before: number[];
    load_average_after: number[];
    wall_s: number;
    /** Share of the machine's CPU that processes other than the benchmark's used during the run, % (noise). */
    foreign_cpu_pct: number;
    /** The same, in the worst single measurement of scenarios 1–4 (as kept). */
    foreign_cpu_pct_max_run: number;
    /** Time spent waiting for a quiet machine before load runs, and how many runs were repeated because others took CPU. */
    quiet_waits_s: number;
    repeated_runs: number;
  };
  settings: {
    /** Which Switchyard was measured: this checkout, or the `--label` of `--root`. */
    worker: string;
    /** Its commit, and whether src/ had uncommitted changes when measured. */
    source: string;
    model: string;
    carrier_path: string;
    non_stream_tokens: number;
    durations: Record<string, number>;
    /** The router's variables set with --var (absent in runs from before the option). */
    var_overrides?: Record<string, string>;
    /** The bench process's nice value with --client-priority, else null (absent in runs from before the option). */
    client_nice?: number | null;
    /** How the clients reached each Worker: its direct socket (since issue 26) or Miniflare's entry Worker (`--via-entry`; all runs before). */
    served_via?: "direct socket" | "entry";
    accounts: string;
  };
  non_stream: NonStreamRow[];
  stream: StreamRow[];
  open_streams?: { streams: number; chunk_interval_ms: number; chunks: number; passthrough?: OpenStreams; router?: OpenStreams };
  ledger?: { hot?: LedgerRun; spread?: LedgerRun };
  /** Scenario 7: the same stream through each carrier protocol's adapter (router CPU per chunk), in interleaved rounds. */
  protocols?: { chunks: number; concurrency: number; rows: { protocol: string; model: string; round: number; measured: Measured }[] };
  /** Scenario `cache` (only with --only): a cached answer and a miss against a carrier call, concurrency 1 (bench/answer-cache.ts). */
  answer_cache?: AnswerCacheRow[];
  /** Scenario 6: paced streams, router and pass-through at once. */
  paced?: PacedRun;
  /** Scenario 6 again with the floor relay in the router's place: what any JS relay adds per chunk (no target). */
  paced_floor?: PacedRun;
  /** Scenario `peers`: Portkey's gateway beside the router against the same simulator, interleaved rounds. */
  peers?: PeersRun;
  /** `--only floor`: each way of relaying the floor relay knows, beside the pass-through and the router. */
  floor_variants?: FloorVariantRow[];
  bundle?: Omit<Bundle, "dir" | "main">;
  startup?: { passthrough: Startup; router: Startup; router_minus_passthrough_ms: number };
  diagnostics?: { calls?: { mixes: ProbeMix[]; note: string }; cpu_profiles?: ProfileSummary[]; ttfb_split?: TtfbSplitRow[]; layouts?: LayoutRun[] };
  /** workerd output (the router's console.error lands here): line count and the last lines. */
  runtime_logs: Record<string, { lines: number; recent: string[] }>;
  /** RSS of each workerd right after start and at the end of the load scenarios. */
  runtime_memory?: Record<string, { start_rss_mb: number; end_rss_mb: number }>;
  failures: string[];
  targets: TargetEntry[];
};

export function compare(p: Measured | undefined, r: Measured | undefined): Comparison | undefined {
  if (!p || !r) return undefined;
  return {
    throughput_ratio: r.rps / p.rps,
    added_p50_ms: r.latency_ms.p50 - p.latency_ms.p50,
    added_p90_ms: r.latency_ms.p90 - p.latency_ms.p90,
    added_p99_ms: r.latency_ms.p99 - p.latency_ms.p99,
    added_ttfb_p50_ms: r.ttfb_ms.p50 - p.ttfb_ms.p50,
    added_ttfb_p99_ms: r.ttfb_ms.p99 - p.ttfb_ms.p99,
    time_ratio_p50: r.latency_ms.p50 / p.latency_ms.p50,
    time_ratio_p99: r.latency_ms.p99 / p.latency_ms.p99,
  };
}

function target(name: string, value: number | null | undefined, op: "<=" | ">=", goal: number, unit: string, detail: string): TargetEntry {
  const v = value === undefined || value === null || !Number.isFinite(value) ? null : value;
  return { name, value: v, goal, op, unit, met: v !== null && (op === "<=" ? v <= goal : v >= goal), detail };
}

/** Whether the router is at or ahead of Portkey on the issue's rows; stream totals against Portkey minus its sleep. */
function peerTargets(p: PeersRun | undefined): TargetEntry[] {
  return PEER_COMPARISONS.filter((c) => c.target).map((c) => {
    const row = p?.rows.find((x) => x.workload.id === c.workload);
    const minus = sleepApplies(c.workload, c.key);
    return target(
      `router vs portkey: ${WORKLOAD_SHORT[c.workload]}, ${c.label}`,
      row?.summary.router[c.key].median,
      c.higher ? ">=" : "<=",
      row ? portkeyFigure(row, c.key, true).median : NaN,
      c.unit,
      `goal = Portkey's median${minus ? ` − its ${PORTKEY_STREAM_SLEEP_MS} ms sleep` : ""}; medians over ${p?.rounds ?? "the"} interleaved rounds (scenario peers)`,
    );
  });
}

/** Figures printed beside the targets, with no goal: what used to be a target and measured the runtime rather than the router. */
export type Diagnostic = { name: string; value: number | null; unit: string; detail: string };

export function diagnosticFigures(r: Results): Diagnostic[] {
  const ratio = r.non_stream.find((x) => x.concurrency === 16)?.router_vs_passthrough?.throughput_ratio;
  return [
    {
      name: "concurrency 16: router throughput ÷ pass-through",
      value: ratio !== undefined && Number.isFinite(ratio) ? ratio : null,
      unit: "×",
      detail: "non-stream req/s, scenario 1; a target (≥ 0.8 ×) until the peer gateway comparison: it measured the runtime, not the router",
    },
  ];
}

/** One entry per target of issues 5 and 12 (the two-part targets are two entries each) and of the peer comparison. */
export function targets(r: Results): TargetEntry[] {
  const ns = (c: number) => r.non_stream.find((x) => x.concurrency === c)?.router_vs_passthrough;
  const stRow = (chunks: number) => r.stream.find((x) => x.chunks === chunks && x.concurrency === 1);
  const st = stRow(2000)?.router_vs_passthrough;
  const mem = r.open_streams?.router;
  const bundleKib = r.bundle ? (r.bundle.wrangler_gzip_kib ?? r.bundle.gzip_bytes / 1024) : undefined;
  const c16 = r.non_stream.find((x) => x.concurrency === 16);
  const cpuGap =
    c16?.router?.runtime_cpu_ms_per_request !== undefined && c16.passthrough?.runtime_cpu_ms_per_request !== undefined
      ? c16.router.runtime_cpu_ms_per_request - c16.passthrough.runtime_cpu_ms_per_request
      : undefined;
  return [
    target("concurrency 1: added latency p50", ns(1)?.added_p50_ms, "<=", 0.5, "ms", "router p50 − pass-through p50, non-stream"),
    target("concurrency 1: added latency p99", ns(1)?.added_p99_ms, "<=", 2, "ms", "router p99 − pass-through p99, non-stream"),
    target("concurrency 16: router − pass-through workerd CPU per request", cpuGap, "<=", 0.3, "ms", "non-stream, scenario 1 (whole workerd process, /proc)"),
    target("200-chunk stream time ÷ floor relay", stRow(200)?.router_vs_floor?.time_ratio_p50, "<=", 1.15, "×", "whole-stream p50, concurrency 1"),
    target("2,000-chunk stream time ÷ floor relay", stRow(2000)?.router_vs_floor?.time_ratio_p50, "<=", 1.15, "×", "whole-stream p50, concurrency 1"),
    target("2,000-chunk stream: added time to first byte p50", st?.added_ttfb_p50_ms, "<=", 1, "ms", "router − pass-through, concurrency 1"),
    target(
      "paced streams: added delay per chunk p99",
      r.paced?.added_chunk_ms.p99,
      "<=",
      1,
      "ms",
      "64 streams × 300 tokens at 50/s; router − pass-through arrival, same chunk",
    ),
    target("paced streams: added time to first byte p50", r.paced?.added_ttfb_ms.p50, "<=", 1, "ms", "router − pass-through, per pair"),
    target(
      "500 open streams: router runtime peak RSS",
      mem?.peak_rss_mb,
      "<=",
      mem ? Math.round(mem.limit_mb * 10) / 10 : NaN,
      "MB",
      mem ? `goal = idle ${mem.idle_rss_mb.toFixed(1)} MB × 1.5 + 50 MB` : "not measured",
    ),
    target("one hot account: settled debits per second", r.ledger?.hot?.settled_debits_per_s, ">=", 1000, "/s", "concurrency 64, debits visible in the ledger"),
    target("bundle gzip size", bundleKib, "<=", 150, "KiB", "wrangler deploy --dry-run, as wrangler reports it"),
    ...peerTargets(r.peers),
  ];
}

/** A target over the runs of one `--repeat` set: met only when its median is. */
export type TargetSummary = {
  name: string;
  unit: string;
  op: "<=" | ">=";
  goal: number;
  values: Array<number | null>;
  runs: number;
  median: number | null;
  min: number | null;
  max: number | null;
  met: boolean;
};

export function summarizeTargets(runs: Results[]): TargetSummary[] {
  const names: string[] = [];
  for (const r of runs) for (const t of r.targets) if (!names.includes(t.name)) names.push(t.name);
  return names.map((name) => {
    const entries = runs.map((r) => r.targets.find((t) => t.name === name));
    const first = entries.find((e) => e !== undefined)!;
    const values = entries.map((e) => e?.value ?? null);
    const finite = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
    // The median of an even count is the mean of the middle two.
    const median =
      finite.length === 0
        ? null
        : finite.length % 2 === 1
          ? finite[(finite.length - 1) / 2]!
          : (finite[finite.length / 2 - 1]! + finite[finite.length / 2]!) / 2;
    // A goal that depends on the run (the RSS goal comes from the run's idle RSS; the peer targets' from
    // Portkey's figures of the run): the median of the goals, taken as the values' median is.
    const goals = entries.filter((e) => e !== undefined && e.goal !== null && Number.isFinite(e.goal)).map((e) => e!.goal);
    const goal = spread(goals).median;
    return {
      name,
      unit: first.unit,
      op: first.op,
      goal,
      values,
      runs: finite.length,
      median,
      min: finite[0] ?? null,
      max: finite[finite.length - 1] ?? null,
      met: median !== null && Number.isFinite(goal) && (first.op === "<=" ? median <= goal : median >= goal),
    };
  });
}

const f = (v: number | undefined, digits = 2) => (v === undefined || !Number.isFinite(v) ? "–" : v.toFixed(digits));
/** A goal as written (0.5, 1.15, 150), or — for a goal measured in the run (Portkey's figures) — rounded as the values are. */
const goalText = (goal: number | null, unit: string) =>
  goal === null || !Number.isFinite(goal) ? "–" : String(Number(goal.toFixed(unit === "×" || unit === "ms" ? 2 : 1)));
const int = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "–" : Math.round(v).toLocaleString("en-US"));
const signed = (v: number | undefined, digits = 2) => (v === undefined || !Number.isFinite(v) ? "–" : `${v >= 0 ? "+" : ""}${v.toFixed(digits)}`);
const NAMES = { simulator: "simulator", passthrough: "pass-through", floor: "floor relay", router: "router" } as const;

/** What a run changed from the defaults: the router's variables (--var) and the bench's priority (--client-priority). */
function settingsNote(s: Results["settings"]): string {
  const vars = Object.entries(s.var_overrides ?? {}).map(([k, v]) => `${k}=${v}`);
  return (
    (vars.length > 0 ? `; router variables ${vars.join(" ")}` : "") +
    (s.client_nice != null ? `; bench process at nice ${s.client_nice}` : "") +
    `; Workers served ${s.served_via === "direct socket" ? "on a direct socket" : "through Miniflare's entry Worker"}`
  );
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

export function markdown(r: Results): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.ram_gb.toFixed(0)} GB RAM, ${m.os}; Node ${m.node}, workerd ${m.workerd} (Miniflare ${m.miniflare}), wrangler ${m.wrangler}. Mode: ${r.mode}; measured: ${r.settings.worker} (${r.settings.source})${settingsNote(r.settings)}. Other processes used ${f(r.conditions.foreign_cpu_pct, 1)} % of the CPU during the run (${f(r.conditions.foreign_cpu_pct_max_run, 1)} % in the worst kept measurement; measurements repeated for that reason: ${r.conditions.repeated_runs}).`,
  );

  if (r.non_stream.length > 0) out.push("\n**1. Non-stream completions** (closed loop; latency in ms; errors = failed requests in the window)\n");
  const rows1: string[][] = [];
  for (const row of r.non_stream) {
    for (const kind of ["simulator", "passthrough", "router"] as const) {
      const x = row[kind];
      if (x)
        rows1.push([
          String(row.concurrency),
          NAMES[kind],
          int(x.rps),
          f(x.latency_ms.p50),
          f(x.latency_ms.p90),
          f(x.latency_ms.p99),
          String(x.errors),
          f(x.runtime_cpu_ms_per_request, 3),
        ]);
    }
    const c = row.router_vs_passthrough;
    if (c)
      rows1.push([
        String(row.concurrency),
        "**router vs pass-through**",
        `**×${f(c.throughput_ratio)}**`,
        `**${signed(c.added_p50_ms)}**`,
        signed(c.added_p90_ms),
        `**${signed(c.added_p99_ms)}**`,
        "",
        "",
      ]);
  }
  if (rows1.length > 0) out.push(table(["conc.", "target", "req/s", "p50", "p90", "p99", "errors", "workerd CPU ms/req"], rows1));

  if (r.stream.length > 0)
    out.push(
      "\n**2. Streams** (closed loop; TTFB = first body byte; stream = whole stream; ms; workerd CPU per 1,000 chunks = the process's CPU per stream ÷ chunks × 1,000)\n",
    );
  const rows2: string[][] = [];
  for (const row of r.stream) {
    for (const kind of ["simulator", "passthrough", "floor", "router"] as const) {
      const x = row[kind];
      if (x)
        rows2.push([
          String(row.chunks),
          String(row.concurrency),
          NAMES[kind],
          f(x.rps, 1),
          f(x.ttfb_ms.p50),
          f(x.ttfb_ms.p99),
          f(x.latency_ms.p50, 1),
          f(x.latency_ms.p99, 1),
          f(x.bytes_per_s / 1e6, 1),
          String(x.errors),
          f(x.runtime_cpu_ms_per_request, 1),
          f(((x.runtime_cpu_ms_per_request ?? NaN) / row.chunks) * 1000, 1),
        ]);
    }
    for (const [label, c] of [
      ["**router vs pass-through**", row.router_vs_passthrough],
      ["**router vs floor relay**", row.router_vs_floor],
    ] as const)
      if (c)
        rows2.push([
          String(row.chunks),
          String(row.concurrency),
          label,
          `×${f(c.throughput_ratio)}`,
          `**${signed(c.added_ttfb_p50_ms)}**`,
          signed(c.added_ttfb_p99_ms),
          `**×${f(c.time_ratio_p50)}**`,
          `×${f(c.time_ratio_p99)}`,
          "",
          "",
          "",
          "",
        ]);
  }
  if (rows2.length > 0)
    out.push(
      table(
        [
          "chunks",
          "conc.",
          "target",
          "streams/s",
          "TTFB p50",
          "TTFB p99",
          "stream p50",
          "stream p99",
          "MB/s",
          "errors",
          "workerd CPU ms/stream",
          "workerd CPU ms/1k chunks",
        ],
        rows2,
      ),
    );

  if (r.peers) out.push(peersMarkdown(r.peers));

  if (r.answer_cache?.length)
    out.push(
      "\n**Answer cache** (the router at concurrency 1, the same request answered by the carrier — the local simulator, which answers at once — or from the cache, and a new request with the cache asked: a miss; bench/answer-cache.ts)\n",
      answerCacheMarkdown(r.answer_cache, table, f),
    );

  if (r.protocols) {
    const p = r.protocols;
    out.push(
      `\n**7. Carrier protocols** (${p.chunks}-chunk streams through the router, concurrency ${p.concurrency}; router CPU per stream and per chunk; rounds interleaved)\n`,
    );
    const rows7 = p.rows.map((x) => [
      x.protocol,
      x.model,
      String(x.round),
      int(x.measured.rps),
      f(x.measured.runtime_cpu_ms_per_request, 3),
      f(((x.measured.runtime_cpu_ms_per_request ?? NaN) * 1000) / p.chunks, 1),
      String(x.measured.errors),
    ]);
    out.push(table(["protocol", "model", "round", "streams/s", "router CPU ms/stream", "router CPU µs/chunk", "errors"], rows7));
  }

  if (r.open_streams) {
    const o = r.open_streams;
    out.push(`\n**3. ${o.streams} slow streams open at once** (${o.chunks} chunks, one every ${o.chunk_interval_ms} ms; RSS of the workerd process)\n`);
    const rows3: string[][] = [];
    for (const kind of ["passthrough", "router"] as const) {
      const x = o[kind];
      if (x)
        rows3.push([
          NAMES[kind],
          `${x.ok}/${x.streams}`,
          x.all_open_together ? "yes" : "no",
          f(x.idle_rss_mb, 1),
          f(x.peak_rss_mb, 1),
          signed(x.peak_rss_mb - x.idle_rss_mb, 1),
          f(x.limit_mb, 1),
          f(x.ttfb_ms.p99, 1),
          f(x.stream_ms.p50 / 1000, 2),
        ]);
    }
    out.push(table(["target", "ok", "all open at once", "idle MB", "peak MB", "growth MB", "goal ≤ MB", "TTFB p99 ms", "stream p50 s"], rows3));
  }

  if (r.ledger) {
    out.push("\n**4. Ledger: settled debits per second** (paid non-stream completions, concurrency 64)\n");
    const rows4: string[][] = [];
    for (const [label, x] of [
      ["one hot account", r.ledger.hot],
      ["64 accounts", r.ledger.spread],
    ] as const) {
      if (x)
        rows4.push([
          label,
          int(x.client_rps),
          `**${int(x.settled_debits_per_s)}**`,
          f(x.settle_lag_s, 2),
          f(x.latency_ms.p50),
          f(x.latency_ms.p99),
          x.usage_exact ? "exact" : `OFF (${x.usage_delta_nano} vs ${x.returned_cost_nano})`,
          x.records_exact ? "exact" : `OFF (${x.records_delta})`,
          String(x.errors),
        ]);
    }
    out.push(
      table(["accounts", "responses/s", "settled debits/s", "settle lag s", "p50 ms", "p99 ms", "usage = Σ usage.cost", "records = requests", "errors"], rows4),
    );
  }

  if (r.bundle || r.startup) {
    out.push("\n**5. Bundle and start-up** (fresh Miniflare, in-memory storage, medians; module eval = importing the module in a fresh Node process)\n");
    const b = r.bundle;
    const s = r.startup;
    const rows5: string[][] = [];
    if (b)
      rows5.push([
        "bundle (wrangler deploy --dry-run)",
        f(b.wrangler_total_kib ?? b.total_bytes / 1024, 1),
        f(b.wrangler_gzip_kib ?? b.gzip_bytes / 1024, 1),
        "",
        "",
        "",
        "",
        "",
      ]);
    if (s) {
      for (const [label, x] of [
        ["pass-through", s.passthrough],
        ["router", s.router],
      ] as const)
        rows5.push([label, "", "", f(x.ready_ms, 0), f(x.first_response_ms, 1), f(x.total_ms, 0), f(x.module_eval_ms, 1), f(x.rss_mb, 1)]);
      rows5.push([
        "router − pass-through",
        "",
        "",
        "",
        "",
        signed(s.router_minus_passthrough_ms, 0),
        signed(s.router.module_eval_ms - s.passthrough.module_eval_ms, 1),
        signed(s.router.rss_mb - s.passthrough.rss_mb, 1),
      ]);
    }
    out.push(table(["", "KiB", "KiB gzip", "start → ready ms", "ready → first 200 ms", "start → first 200 ms", "module eval ms (V8)", "RSS MB"], rows5));
    if (b && b.composition.length > 0)
      out.push(
        `\nBundle composition (minified bytes, from the source map): ${b.composition.map((c) => `${c.name} ${f(c.kib, 1)} KiB (${f(c.pct, 1)} %)`).join(", ")}.`,
      );
  }

  for (const p of [r.paced, r.paced_floor]) {
    if (!p) continue;
    const relay = p.relay ?? "router";
    out.push(
      `\n**6. Paced streams${relay === "router" ? "" : `, ${relay} in the router's place (no target)`}** (${p.pairs} streams of ${p.tokens} tokens at ${p.tps} tokens/s through each Worker at once, each chunk written to both by one pacer in the same tick; ms; ${f(p.wall_s, 1)} s)\n`,
    );
    const rows6: string[][] = [];
    for (const [label, x] of [
      ["pass-through", p.passthrough],
      [relay, p.router],
    ] as const)
      rows6.push([
        label,
        `${x.ok}/${x.streams}`,
        f(x.events_per_stream, 1),
        f(x.ttfb_ms.p50),
        f(x.ttfb_ms.p99),
        f(x.chunk_latency_ms.p50),
        f(x.chunk_latency_ms.p99),
        f(x.runtime_cpu_ms_per_1k_chunks, 1),
      ]);
    rows6.push([
      `**${relay} − pass-through** (same chunk, same pair)`,
      "",
      "",
      `**${signed(p.added_ttfb_ms.p50)}**`,
      signed(p.added_ttfb_ms.p99),
      `**${signed(p.added_chunk_ms.p50)}**`,
      `**${signed(p.added_chunk_ms.p99)}**`,
      "",
    ]);
    rows6.push([
      `${relay} − pass-through, chunks written on schedule (no start-up backlog)`,
      "",
      "",
      "",
      "",
      signed(p.added_chunk_on_schedule_ms.p50),
      signed(p.added_chunk_on_schedule_ms.p99),
      "",
    ]);
    out.push(table(["target", "ok", "events/stream", "TTFB p50", "TTFB p99", "chunk p50", "chunk p99", "workerd CPU ms/1k chunks"], rows6));
    out.push(
      `\nChunk = arrival at the client − the pacer's write of that chunk (the whole Worker path). Carrier events per stream: ${p.carrier_events}; pairs whose sides delivered different event counts: ${p.mismatched_pairs}; carrier requests that reached the pacer after their pair's first token: ${p.late_arrivals}; other processes: ${f(p.foreign_cpu_pct, 1)} % of the CPU.`,
    );
  }

  if (r.floor_variants && r.floor_variants.length > 0) {
    out.push("\n**Floor relay variants** (2,000-chunk streams, concurrency 1; the reference Workers beside them; ms)\n");
    out.push(
      table(
        ["variant", "streams", "stream p50", "stream p99", "TTFB p50", "workerd CPU ms/1k chunks", "errors"],
        r.floor_variants.map((v) => [
          v.variant,
          String(v.measured.requests),
          f(v.measured.latency_ms.p50, 1),
          f(v.measured.latency_ms.p99, 1),
          f(v.measured.ttfb_ms.p50),
          f(((v.measured.runtime_cpu_ms_per_request ?? NaN) / v.chunks) * 1000, 1),
          String(v.measured.errors),
        ]),
      ),
    );
  }

  const split = r.diagnostics?.ttfb_split ?? [];
  if (split.length > 0) {
    out.push(
      "\n**Time to first byte, split at the carrier** (streams at concurrency 1; p50 of each part, ms; the carrier's own stamps on the machine's monotonic clock)\n",
    );
    const rowsT: string[][] = [];
    for (const row of split) {
      const when = row.pause_ms > 0 ? `${row.pause_ms} ms apart` : "back to back";
      for (const [kind, name] of [
        ["passthrough", "pass-through"],
        ["floor", "floor relay"],
        ["router", "router"],
      ] as const) {
        const x = row[kind];
        if (x) rowsT.push([String(row.chunks), when, name, String(x.requests), f(x.ttfb_ms), f(x.before_carrier_ms), f(x.carrier_ms), f(x.after_carrier_ms)]);
      }
      const p = row.passthrough;
      const x = row.router;
      if (p && x)
        rowsT.push([
          String(row.chunks),
          when,
          "**router − pass-through**",
          "",
          `**${signed(x.ttfb_ms - p.ttfb_ms)}**`,
          signed(x.before_carrier_ms - p.before_carrier_ms),
          signed(x.carrier_ms - p.carrier_ms),
          signed(x.after_carrier_ms - p.after_carrier_ms),
        ]);
    }
    out.push(table(["chunks", "requests sent", "Worker", "streams", "TTFB", "before the carrier", "carrier", "after the carrier"], rowsT));
    out.push(
      "\nBefore the carrier: the client sent → the carrier has read the request (the Worker's work before its fetch). Carrier: its own time to the first byte. After the carrier: its first byte → the client's (headers, first read, rewrite, write). Medians of parts need not add up to the median TTFB.",
    );
  }

  const probe = r.diagnostics?.calls;
  if (probe && probe.mixes.length > 0) {
    out.push("\n**Probe: calls per router request** (not timed; `worker:` from the request path, `ledger:` inside the ledger Durable Object)\n");
    const keys = [...new Set(probe.mixes.flatMap((mx) => Object.keys(mx.per_request)))].sort();
    out.push(
      table(
        ["call", ...probe.mixes.map((mx) => mx.name)],
        keys.map((k) => [k, ...probe.mixes.map((mx) => f(mx.per_request[k] ?? 0, 2))]),
      ),
    );
  }
  if (r.diagnostics?.layouts?.length)
    out.push(
      `\n**Production-like split** (non-stream, concurrency 16; all in one: router, ledger Durable Object and local D1 in one workerd; split: the ledger and its D1 in a workerd of their own, bench/split-router.ts)\n\n${layoutsMarkdown(r.diagnostics.layouts)}`,
    );
  for (const p of r.diagnostics?.cpu_profiles ?? []) {
    out.push(`\n**CPU profile of the router isolate: ${p.name}** (${f(p.busy_ms_per_request, 3)} ms of isolate CPU per request; share of busy time)\n`);
    const rows = Array.from({ length: Math.max(Math.min(p.by_source.length, 10), Math.min(p.top_functions.length, 10)) }, (_, i) => {
      const a = p.by_source[i];
      const b = p.top_functions[i];
      return [
        a ? `${a.name}` : "",
        a ? `${f(a.pct, 1)} %` : "",
        b ? `\`${b.name.replaceAll("|", "\\|").replaceAll("`", "'")}\`` : "",
        b ? `${f(b.pct, 1)} %` : "",
      ];
    });
    out.push(table(["source", "self", "hottest functions (self time)", "self"], rows));
    const builtins = p.top_builtins_by_caller ?? []; // absent in runs recorded before it was added
    if (builtins.length > 0)
      out.push(
        `\nRuntime built-ins by the function of ours that called them:\n\n${table(
          ["built-in ← caller", "self"],
          builtins.slice(0, 10).map((x) => [`\`${x.name.replaceAll("|", "\\|").replaceAll("`", "'")}\``, `${f(x.pct, 1)} %`]),
        )}`,
      );
  }

  out.push("\n**Targets**\n");
  out.push(
    table(
      ["target", "value", "goal", "met"],
      r.targets.map((t) => [
        t.name,
        t.value === null ? "–" : `${f(t.value, t.unit === "×" || t.unit === "ms" ? 2 : 1)} ${t.unit}`,
        `${t.op === "<=" ? "≤" : "≥"} ${goalText(t.goal, t.unit)} ${t.unit}`,
        t.value === null ? "not measured" : t.met ? "yes" : "**no**",
      ]),
    ),
  );
  const diag = diagnosticFigures(r).filter((d) => d.value !== null);
  if (diag.length > 0) {
    out.push("\n**Diagnostics** (not targets)\n");
    out.push(
      table(
        ["figure", "value", "note"],
        diag.map((d) => [d.name, `${f(d.value ?? undefined)} ${d.unit}`, d.detail]),
      ),
    );
  }
  if (r.failures.length > 0) out.push(`\nFailures: ${r.failures.join("; ")}`);
  // What the runtimes printed: a Worker that logs nothing under load is the expected case, so any line is news.
  const logs = Object.entries(r.runtime_logs ?? {});
  if (logs.length > 0) {
    out.push(`\nRuntime log lines during the run: ${logs.map(([name, l]) => `${name} ${l.lines}`).join(", ")}.`);
    for (const [name, l] of logs)
      if (l.lines > 0)
        out.push(
          `Last lines of ${name}: ${l.recent
            .slice(-3)
            .map((line) => `\`${line.slice(0, 160)}\``)
            .join(" ")}`,
        );
  }
  return out.join("\n");
}

/** Digits for a figure of the peer tables: stream times and per-stream CPU need fewer than non-stream ones. */
function peerDigits(key: keyof PeerFigures, stream: boolean): number {
  if (key === "rps") return stream ? 1 : 0;
  if (key === "rps_vs_direct") return 2;
  if (key === "rss_mb") return 1;
  if (key === "cpu_ms") return stream ? 1 : 3;
  return stream && (key === "p50_ms" || key === "p99_ms" || key === "added_p50_ms" || key === "added_p99_ms") ? 1 : 2;
}

/** "median (min – max)"; the range left out when there is one round. */
function spreadText(s: Spread, digits: number, sign = false): string {
  const one = (v: number) => (sign ? signed(v, digits) : f(v, digits));
  if (!Number.isFinite(s.median)) return "–";
  return s.min === s.max ? one(s.median) : `${one(s.median)} (${one(s.min)} – ${one(s.max)})`;
}

/** Scenario `peers`: the side-by-side table (the issue's rows and more), then every figure of each target. */
function peersMarkdown(p: PeersRun): string {
  const out: string[] = [];
  const g = p.gateway;
  const pins = Object.entries(g.pins)
    .filter(([n]) => n !== "@portkey-ai/gateway")
    .map(([n, v]) => `${n} ${v}`)
    .join(", ");
  out.push(
    `\n**Peer gateway: Portkey ${g.version} on Node beside the router${p.router_layout === "split" ? " (split: the ledger and its D1 in a workerd of their own, not counted in the router's CPU)" : " (all in one workerd: the ledger and local D1 on the router's thread)"}** (same simulator, same client; ${p.rounds} rounds, the targets' order rotating; median over the rounds, range in brackets; ms unless marked; Portkey pinned with ${pins}; Portkey sleeps ${g.stream_sleep_ms} ms before each stream's first event, so its stream times are given raw and minus that sleep)\n`,
  );
  const rowOf = (id: string) => p.rows.find((x) => x.workload.id === id);
  const side: string[][] = [];
  for (const c of PEER_COMPARISONS) {
    const row = rowOf(c.workload);
    if (!row) continue;
    const digits = peerDigits(c.key, row.workload.stream);
    const sign = c.key.startsWith("added_");
    const minus = sleepApplies(row.workload, c.key);
    const pk = portkeyFigure(row, c.key, true).median;
    const rt = row.summary.router[c.key].median;
    const ahead = !Number.isFinite(pk) || !Number.isFinite(rt) ? "–" : (c.higher ? rt >= pk : rt <= pk) ? "yes" : "**no**";
    side.push([
      WORKLOAD_SHORT[c.workload] ?? c.workload,
      `${c.label}${c.unit === "ms" ? "" : ` (${c.unit})`}`,
      spreadText(row.summary.portkey[c.key], digits, sign),
      minus ? spreadText(portkeyFigure(row, c.key, true), digits, sign) : "",
      spreadText(row.summary.router[c.key], digits, sign),
      ahead,
      c.target ? "yes" : "",
    ]);
  }
  out.push(table(["workload", "figure", "Portkey", `Portkey − ${g.stream_sleep_ms} ms sleep`, "router", "router at or ahead", "target"], side));
  out.push(
    `\nAdded = the target's figure − the direct simulator's in the same round. CPU = the gateway process's CPU time per request (per stream), warm-up included: Portkey's Node process, the router's workerd (which in Miniflare also runs local D1, KV and the ledger Durable Object). The rows marked as targets are the targets "router vs portkey" (the others are figures); stream totals are judged against Portkey minus its sleep.\n`,
  );
  const all: string[][] = [];
  for (const row of p.rows) {
    const st = row.workload.stream;
    const cell = (x: PeerRow["summary"][keyof PeerRow["summary"]], key: keyof PeerFigures) => spreadText(x[key], peerDigits(key, st));
    for (const kind of PEER_KINDS) {
      const x = row.summary[kind];
      all.push([
        WORKLOAD_SHORT[row.workload.id] ?? row.workload.id,
        PEER_NAMES[kind],
        cell(x, "rps"),
        cell(x, "p50_ms"),
        cell(x, "p99_ms"),
        cell(x, "ttfb_p50_ms"),
        cell(x, "ttfb_p99_ms"),
        kind === "simulator" ? "" : cell(x, "cpu_ms"),
        kind === "simulator" ? "" : cell(x, "rss_mb"),
        `${x.errors}/${x.requests + x.errors}`,
      ]);
      if (kind === "portkey" && st)
        all.push([
          "",
          `Portkey − ${g.stream_sleep_ms} ms sleep`,
          "",
          spreadText(portkeyFigure(row, "p50_ms", true), peerDigits("p50_ms", st)),
          spreadText(portkeyFigure(row, "p99_ms", true), peerDigits("p99_ms", st)),
          spreadText(portkeyFigure(row, "ttfb_p50_ms", true), peerDigits("ttfb_p50_ms", st)),
          spreadText(portkeyFigure(row, "ttfb_p99_ms", true), peerDigits("ttfb_p99_ms", st)),
          "",
          "",
          "",
        ]);
    }
  }
  out.push(
    table(["workload", "target", "req/s (streams/s)", "p50", "p99", "TTFB p50", "TTFB p99", "CPU ms/req (per stream)", "RSS MB after", "errors/requests"], all),
  );
  const m = p.memory;
  out.push(
    `\nRSS of the gateway processes: Portkey ${f(m.portkey.idle_rss_mb, 1)} MB after start, peak ${f(m.portkey.peak_rss_mb, 1)} MB; router (workerd) ${f(m.router.idle_rss_mb, 1)} MB after start, peak ${f(m.router.peak_rss_mb, 1)} MB (peak: ${m.portkey.peak_source}). Windows: warm-up ${p.durations.warmupMs} ms (streams: at most 1 s), non-stream ${p.durations.nonStreamMs} ms, streams ${p.durations.streamMs} ms per target and round; round orders: ${p.orders.map((o) => o.map((k) => (k === "simulator" ? "direct" : k)).join(" → ")).join("; ")}. Other processes: at most ${f(p.foreign_cpu_pct_max, 1)} % of the CPU during a kept measurement.`,
  );
  return out.join("\n");
}

/** The targets of a `--repeat` set: median and range over the runs; met only when the median is. */
export function summaryMarkdown(all: TargetSummary[], runs: number, diagnostics: DiagnosticSummary[] = []): string {
  const fmt = (v: number | null, unit: string) => (v === null ? "–" : f(v, unit === "×" || unit === "ms" ? 2 : 1));
  const summary = all.filter((t) => t.runs > 0);
  const missing = all.filter((t) => t.runs === 0).map((t) => t.name);
  const diag = diagnostics.filter((d) => d.runs > 0);
  return [
    `**Targets over ${runs} run${runs === 1 ? "" : "s"}** (median, and the range min – max; a target is met only when its median is)\n`,
    table(
      ["target", "median", "range", "runs", "goal", "met"],
      summary.map((t) => [
        t.name,
        `${fmt(t.median, t.unit)} ${t.unit}`,
        `${fmt(t.min, t.unit)} – ${fmt(t.max, t.unit)}`,
        String(t.runs),
        `${t.op === "<=" ? "≤" : "≥"} ${goalText(t.goal, t.unit)} ${t.unit}`,
        t.met ? "yes" : "**no**",
      ]),
    ),
    ...(missing.length > 0 ? [`\nNot measured in this set: ${missing.join("; ")}.`] : []),
    ...(diag.length > 0
      ? [
          "\n**Diagnostics over the runs** (not targets; median and range)\n",
          table(
            ["figure", "median", "range", "runs", "note"],
            diag.map((d) => [d.name, `${fmt(d.median, d.unit)} ${d.unit}`, `${fmt(d.min, d.unit)} – ${fmt(d.max, d.unit)}`, String(d.runs), d.detail]),
          ),
        ]
      : []),
  ].join("\n");
}

export type DiagnosticSummary = { name: string; unit: string; detail: string; runs: number; median: number | null; min: number | null; max: number | null };

/** The diagnostics of a set: median and range over its runs (computed from each run's figures, also for runs recorded before). */
export function summarizeDiagnostics(runs: Results[]): DiagnosticSummary[] {
  const per = runs.map(diagnosticFigures);
  return (per[0] ?? []).map((d, i) => {
    const values = per.map((list) => list[i]?.value ?? null).filter((v): v is number => v !== null);
    const s = spread(values);
    const fin = (v: number) => (Number.isFinite(v) ? v : null);
    return { name: d.name, unit: d.unit, detail: d.detail, runs: values.length, median: fin(s.median), min: fin(s.min), max: fin(s.max) };
  });
}
