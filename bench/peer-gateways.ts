// Scenario `peers` of `npm run bench`: a peer gateway — Portkey's open-source AI gateway on Node — beside
// Switchyard's router, against the same carrier simulator, from the same client. Rounds are interleaved:
// in each round every workload runs against each target in turn, the order of the targets rotating from
// round to round (direct simulator, Portkey, router; then Portkey, router, direct; …), so that a busy
// moment of the machine does not fall on one target only. Per target and workload: the median over the
// rounds and the range. The peer package (bench/peers/) is bench-only: installed here on demand, never a
// dependency of Switchyard.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { memoryOf, resetPeak } from "./processes.ts";
import { chatBody, closedLoop, type Measured, type Target } from "./scenarios.ts";

/** Portkey sleeps this long before the first event of every stream (`readStream` in its stream handler). */
export const PORTKEY_STREAM_SLEEP_MS = 25;

export type PeerKind = "simulator" | "portkey" | "router";
export const PEER_KINDS: readonly PeerKind[] = ["simulator", "portkey", "router"];
export const PEER_NAMES: Record<PeerKind, string> = { simulator: "direct (simulator)", portkey: "Portkey", router: "router" };

export type PeerWorkload = { id: string; label: string; stream: boolean; tokens: number; concurrency: number };

/** The rows of the issue's table, plus concurrency 64 and the 2,000-chunk stream. */
export function peerWorkloads(nonStreamTokens: number): PeerWorkload[] {
  return [
    { id: "c1", label: "non-stream, concurrency 1", stream: false, tokens: nonStreamTokens, concurrency: 1 },
    { id: "c16", label: "non-stream, concurrency 16", stream: false, tokens: nonStreamTokens, concurrency: 16 },
    { id: "c64", label: "non-stream, concurrency 64", stream: false, tokens: nonStreamTokens, concurrency: 64 },
    { id: "s200", label: "200-chunk stream, concurrency 1", stream: true, tokens: 200, concurrency: 1 },
    { id: "s2000", label: "2,000-chunk stream, concurrency 1", stream: true, tokens: 2000, concurrency: 1 },
  ];
}

/** One workload against one target in one round. */
export type PeerSample = {
  round: number;
  /** Where the target came in the round's order (1–3). */
  position: number;
  measured: Measured;
  /** RSS of the target's process right after the measurement, MB (none for the simulator). */
  rss_mb: number | null;
};

/** The figures of one sample; `added_*` and `rps_vs_direct` against the direct simulator of the same round. */
export type PeerFigures = {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  ttfb_p50_ms: number;
  ttfb_p99_ms: number;
  added_p50_ms: number;
  added_p99_ms: number;
  added_ttfb_p50_ms: number;
  rps_vs_direct: number;
  /** CPU of the target's process per request (per stream), ms, warm-up included: Portkey's Node process, the router's workerd. */
  cpu_ms: number;
  rss_mb: number;
};
const FIGURE_KEYS: Array<keyof PeerFigures> = [
  "rps",
  "p50_ms",
  "p99_ms",
  "ttfb_p50_ms",
  "ttfb_p99_ms",
  "added_p50_ms",
  "added_p99_ms",
  "added_ttfb_p50_ms",
  "rps_vs_direct",
  "cpu_ms",
  "rss_mb",
];
export type Spread = { median: number; min: number; max: number };
export type PeerSummary = { [K in keyof PeerFigures]: Spread } & { errors: number; requests: number };

export type PeerRow = {
  workload: PeerWorkload;
  samples: Record<PeerKind, PeerSample[]>;
  summary: Record<PeerKind, PeerSummary>;
};

export type PeersRun = {
  gateway: { name: string; version: string; pins: Record<string, string>; stream_sleep_ms: number };
  /** How the router ran: split (the default since issue 26: the ledger and its D1 in a workerd of their own, whose CPU is not in the router's figures), or all in one workerd (`--all-in-one`; absent: all in one). */
  router_layout?: "all in one" | "split";
  rounds: number;
  durations: { warmupMs: number; nonStreamMs: number; streamMs: number };
  /** The target order of each round. */
  orders: PeerKind[][];
  rows: PeerRow[];
  /** RSS of each gateway process: after start, and its peak over the scenario (VmHWM after a reset, else the highest reading). */
  memory: Record<"portkey" | "router", { idle_rss_mb: number; peak_rss_mb: number; peak_source: "VmHWM" | "samples" }>;
  /** Share of the machine's CPU other processes used, % — the worst kept measurement. */
  foreign_cpu_pct_max: number;
};

/** Pinned versions, from bench/peers/package.json: the gateway and its `overrides`. */
export function peerPins(root: string): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, "bench", "peers", "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    overrides?: Record<string, string>;
  };
  return { "@portkey-ai/gateway": pkg.dependencies["@portkey-ai/gateway"]!, ...pkg.overrides };
}

/**
 * Installs bench/peers/ (`npm ci --prefix bench/peers`, from its own lockfile) when its node_modules is
 * missing or holds other versions than the pins; returns the pins. Install scripts are not run: the only
 * one is the gateway's `patch-package`, and the published package ships no patches.
 */
export function ensurePeers(root: string, log: (msg: string) => void): Record<string, string> {
  const dir = join(root, "bench", "peers");
  const pins = peerPins(root);
  const version = (path: string) => {
    try {
      return (JSON.parse(readFileSync(join(path, "package.json"), "utf8")) as { version: string }).version;
    } catch {
      return undefined;
    }
  };
  const wrong = () =>
    Object.entries(pins)
      .filter(
        ([name, want]) =>
          version(join(dir, "node_modules", name)) !== want || existsSync(join(dir, "node_modules", "@portkey-ai", "gateway", "node_modules", name)),
      )
      .map(([name, want]) => `${name} ${version(join(dir, "node_modules", name)) ?? "missing"} (pinned ${want})`);
  const before = wrong();
  if (before.length === 0) return pins;
  log(
    existsSync(join(dir, "node_modules"))
      ? `bench/peers: ${before.join(", ")}; reinstalling: npm ci --prefix bench/peers`
      : "bench/peers has no node_modules: installing the peer gateway with npm ci --prefix bench/peers (bench-only, not a dependency of Switchyard)",
  );
  execFileSync("npm", ["ci", "--prefix", "bench/peers", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: root,
    stdio: ["ignore", 2, 2],
    timeout: 300_000,
  });
  const after = wrong();
  if (after.length > 0) throw new Error(`bench/peers after npm ci: ${after.join(", ")}`);
  log(
    `bench/peers: installed ${Object.entries(pins)
      .map(([n, v]) => `${n} ${v}`)
      .join(", ")}`,
  );
  return pins;
}

/** The median (of an even count: the mean of the middle two) and the range. */
export function spread(values: number[]): Spread {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (xs.length === 0) return { median: NaN, min: NaN, max: NaN };
  const mid = xs.length % 2 === 1 ? xs[(xs.length - 1) / 2]! : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2;
  return { median: mid, min: xs[0]!, max: xs[xs.length - 1]! };
}

function figures(sample: PeerSample, direct: PeerSample | undefined): PeerFigures {
  const m = sample.measured;
  const d = direct?.measured;
  return {
    rps: m.rps,
    p50_ms: m.latency_ms.p50,
    p99_ms: m.latency_ms.p99,
    ttfb_p50_ms: m.ttfb_ms.p50,
    ttfb_p99_ms: m.ttfb_ms.p99,
    added_p50_ms: d ? m.latency_ms.p50 - d.latency_ms.p50 : NaN,
    added_p99_ms: d ? m.latency_ms.p99 - d.latency_ms.p99 : NaN,
    added_ttfb_p50_ms: d ? m.ttfb_ms.p50 - d.ttfb_ms.p50 : NaN,
    rps_vs_direct: d ? m.rps / d.rps : NaN,
    cpu_ms: m.runtime_cpu_ms_per_request ?? NaN,
    rss_mb: sample.rss_mb ?? NaN,
  };
}

export function summarize(samples: PeerSample[], direct: PeerSample[]): PeerSummary {
  const per = samples.map((s) =>
    figures(
      s,
      direct.find((d) => d.round === s.round),
    ),
  );
  const out = Object.fromEntries(FIGURE_KEYS.map((k) => [k, spread(per.map((p) => p[k]))])) as { [K in keyof PeerFigures]: Spread };
  return { ...out, errors: samples.reduce((n, s) => n + s.measured.errors, 0), requests: samples.reduce((n, s) => n + s.measured.requests, 0) };
}

/** The target order of round `round` (0-based): the kinds rotated by one place per round. */
export function roundOrder(round: number): PeerKind[] {
  return PEER_KINDS.map((_, i) => PEER_KINDS[(i + round) % PEER_KINDS.length]!);
}

/** The scenario: `rounds` rounds of every workload against every target, the order rotating. */
export async function peersScenario(o: {
  targets: Record<PeerKind, Target>;
  /** The process whose CPU and RSS is each gateway's: Portkey's Node process, the router's workerd. */
  pids: { portkey: number; router: number | undefined; simulator: number };
  pins: Record<string, string>;
  rounds: number;
  durations: { warmupMs: number; nonStreamMs: number; streamMs: number };
  model: string;
  nonStreamTokens: number;
  key: string;
  /** Runs one measurement (run.ts: waits for a quiet machine, repeats a noisy run). */
  measure: (label: string, run: () => Promise<Measured>) => Promise<Measured>;
  log: (msg: string) => void;
  reportErrors: (label: string, m: Measured) => void;
}): Promise<PeersRun> {
  const workloads = peerWorkloads(o.nonStreamTokens);
  const gatewayPid = (kind: PeerKind) => (kind === "portkey" ? o.pids.portkey : kind === "router" ? o.pids.router : undefined);
  const rssMb = (pid: number | undefined) => (pid === undefined ? null : (memoryOf(pid)?.rssKb ?? NaN) / 1024);
  const idle = { portkey: rssMb(o.pids.portkey) ?? NaN, router: rssMb(o.pids.router) ?? NaN };
  const reset = { portkey: resetPeak(o.pids.portkey), router: o.pids.router !== undefined && resetPeak(o.pids.router) };
  const highest = { portkey: idle.portkey, router: idle.router };
  const samples = new Map(workloads.map((w) => [w.id, { simulator: [], portkey: [], router: [] } as Record<PeerKind, PeerSample[]>]));
  const orders: PeerKind[][] = [];
  let foreignMax = 0;
  for (let round = 0; round < o.rounds; round++) {
    const order = roundOrder(round);
    orders.push(order);
    for (const w of workloads) {
      const body = chatBody({ model: o.model, stream: w.stream, tokens: w.tokens });
      for (const [position, kind] of order.entries()) {
        o.log(`peers: round ${round + 1} of ${o.rounds}, ${w.label}, ${PEER_NAMES[kind]}`);
        const measured = await o.measure(`peers ${kind} ${w.id}`, () =>
          closedLoop(o.targets[kind], {
            concurrency: w.concurrency,
            warmupMs: w.stream ? Math.min(o.durations.warmupMs, 1000) : o.durations.warmupMs,
            durationMs: w.stream ? o.durations.streamMs : o.durations.nonStreamMs,
            stream: w.stream,
            key: o.key,
            body,
            simulatorPid: o.pids.simulator,
          }),
        );
        o.reportErrors(`${PEER_NAMES[kind]} ${w.id}`, measured);
        foreignMax = Math.max(foreignMax, Number.isFinite(measured.foreign_cpu_pct) ? measured.foreign_cpu_pct : 0);
        const rss = rssMb(gatewayPid(kind));
        if (rss !== null && (kind === "portkey" || kind === "router")) highest[kind] = Math.max(highest[kind], rss);
        samples.get(w.id)![kind].push({ round: round + 1, position: position + 1, measured, rss_mb: rss });
      }
    }
  }
  const peak = (kind: "portkey" | "router") => {
    const pid = kind === "portkey" ? o.pids.portkey : o.pids.router;
    const hwm = pid === undefined ? NaN : (memoryOf(pid)?.hwmKb ?? NaN) / 1024;
    return reset[kind] && Number.isFinite(hwm)
      ? { idle_rss_mb: idle[kind], peak_rss_mb: Math.max(hwm, highest[kind]), peak_source: "VmHWM" as const }
      : { idle_rss_mb: idle[kind], peak_rss_mb: highest[kind], peak_source: "samples" as const };
  };
  return {
    gateway: {
      name: "Portkey AI gateway (open source, Node)",
      version: o.pins["@portkey-ai/gateway"] ?? "unknown",
      pins: o.pins,
      stream_sleep_ms: PORTKEY_STREAM_SLEEP_MS,
    },
    rounds: o.rounds,
    durations: { ...o.durations },
    orders,
    rows: workloads.map((w) => {
      const s = samples.get(w.id)!;
      return {
        workload: w,
        samples: s,
        summary: {
          simulator: summarize(s.simulator, s.simulator),
          portkey: summarize(s.portkey, s.simulator),
          router: summarize(s.router, s.simulator),
        },
      };
    }),
    memory: { portkey: peak("portkey"), router: peak("router") },
    foreign_cpu_pct_max: foreignMax,
  };
}

/** Whether a stream figure of Portkey's is a time its 25 ms sleep is part of. */
const SLEEP_FIGURES = new Set<keyof PeerFigures>(["p50_ms", "p99_ms", "ttfb_p50_ms", "ttfb_p99_ms", "added_p50_ms", "added_p99_ms", "added_ttfb_p50_ms"]);

/** Whether Portkey's figure `key` of a workload is a stream time, which its 25 ms sleep is part of. */
export function sleepApplies(workload: PeerWorkload | string, key: keyof PeerFigures): boolean {
  const stream = typeof workload === "string" ? workload.startsWith("s") : workload.stream;
  return stream && SLEEP_FIGURES.has(key);
}

/** Portkey's figure, with its stream sleep subtracted where `minusSleep` and the figure is a stream time. */
export function portkeyFigure(row: PeerRow, key: keyof PeerFigures, minusSleep: boolean): Spread {
  const s = row.summary.portkey[key];
  if (!minusSleep || !sleepApplies(row.workload, key)) return s;
  return { median: s.median - PORTKEY_STREAM_SLEEP_MS, min: s.min - PORTKEY_STREAM_SLEEP_MS, max: s.max - PORTKEY_STREAM_SLEEP_MS };
}

/** The comparisons of the side-by-side table: lower is better unless `higher`. Targets: the issue's rows. */
export const PEER_COMPARISONS: Array<{ workload: string; key: keyof PeerFigures; label: string; unit: string; higher?: boolean; target: boolean }> = [
  { workload: "c1", key: "added_p50_ms", label: "added latency p50", unit: "ms", target: true },
  { workload: "c1", key: "added_p99_ms", label: "added latency p99", unit: "ms", target: true },
  { workload: "c16", key: "rps_vs_direct", label: "req/s ÷ direct", unit: "×", higher: true, target: true },
  { workload: "c16", key: "added_p99_ms", label: "added latency p99", unit: "ms", target: true },
  { workload: "c16", key: "cpu_ms", label: "CPU per request", unit: "ms", target: true },
  { workload: "c64", key: "rps_vs_direct", label: "req/s ÷ direct", unit: "×", higher: true, target: false },
  { workload: "c64", key: "added_p99_ms", label: "added latency p99", unit: "ms", target: false },
  { workload: "c64", key: "cpu_ms", label: "CPU per request", unit: "ms", target: false },
  { workload: "s200", key: "added_p50_ms", label: "added total p50", unit: "ms", target: true },
  { workload: "s200", key: "added_p99_ms", label: "added total p99", unit: "ms", target: true },
  { workload: "s200", key: "cpu_ms", label: "CPU per stream", unit: "ms", target: true },
  { workload: "s200", key: "added_ttfb_p50_ms", label: "added time to first byte p50", unit: "ms", target: false },
  { workload: "s2000", key: "added_p50_ms", label: "added total p50", unit: "ms", target: false },
  { workload: "s2000", key: "added_p99_ms", label: "added total p99", unit: "ms", target: false },
  { workload: "s2000", key: "cpu_ms", label: "CPU per stream", unit: "ms", target: false },
  { workload: "s2000", key: "added_ttfb_p50_ms", label: "added time to first byte p50", unit: "ms", target: false },
];

export const WORKLOAD_SHORT: Record<string, string> = {
  c1: "concurrency 1",
  c16: "concurrency 16",
  c64: "concurrency 64",
  s200: "200-chunk stream",
  s2000: "2,000-chunk stream",
};
