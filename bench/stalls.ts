// The stall finder: what held the router's isolate when a request under load was slow, and for how long.
//
//   npx tsx bench/stalls.ts [--seconds 10] [--concurrency 16] [--stream] [--tokens 16] [--slow-ms 5] [--var NAME=VALUE …] [--split] [--via-entry] [--json out.json]
//
// It builds the deploy bundle, starts the carrier simulator and the router in Miniflare (as `npm run bench`
// does, everything on 127.0.0.1, stopped on exit), and runs a closed loop against a paid model while a V8
// CPU profile of the router isolate samples every 100 µs through workerd's inspector. V8 stamps samples with
// the monotonic clock the load generator's process.hrtime reads, so each slow request (more than
// `--slow-ms` over the median) is laid over the samples taken while it waited. Overlapping slow requests
// make one window; in each window the longest run of samples without an idle one is what held the isolate:
// its length, and the functions of ours (and the runtime's, and the garbage collector) on the stack
// throughout it, mapped to the sources through wrangler's source map. Runs of the whole measurement longer
// than `--slow-ms` are listed by length too, slow request or not. V8 samples only while the isolate is
// entered: a pause over 1 ms between samples is time its thread spent elsewhere (workerd's I/O, another
// isolate — local D1 and KV run on the same thread — or no core); it ends a run and is reported apart,
// with what the isolate ran last before it.
//
// In Miniflare one workerd process runs the router isolate, the ledger Durable Object (in the same isolate)
// and local D1 and KV (their own isolates, one thread): a stall here may be work production does on other
// machines. bench/RESULTS.md says which. `--split` runs the ledger Durable Object (and the D1 its records
// go to) in a second Miniflare instance, its own workerd process, as production runs it apart from the
// router (bench/split-router.ts); the profile stays on the router's isolate. The workerd CPU per request is
// reported per process: the router's, and with `--split` the ledger's.
import { writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { routerInspector } from "./inspector.ts";
import { runLoad, stats, type Completion } from "./load.ts";
import os from "node:os";
import { Cleanup, cpuSnapshot, foreignCpuPercent, freePort, serveThroughEntry, startRuntime, startSimulatorProcess } from "./processes.ts";
import { Mapper, type Profile } from "./profile.ts";
import { Admin, applyMigrations, buildBundle, routerOptions } from "./router.ts";
import { chatBody, chatRequest, cpuMs, type Target } from "./scenarios.ts";
import { startSplitRouter, type SplitRuntime } from "./split-router.ts";
import { parseVars } from "./script-router.ts";
import { readWranglerConfig } from "../scripts/wrangler-config.ts";

type TimedProfile = Profile & { startTime: number; endTime: number };

export type HeldBy = { name: string; ms: number };
/** A pause in the samples: the isolate away from its thread, and what it ran last before. */
export type Gap = { at_s: number; ms: number; after: string };
export type Stall = { at_s: number; ms: number; slow_requests: number; held_by: HeldBy[] };
export type StallReport = {
  load: string;
  /** CPU other processes took meanwhile, % of the machine: above a few %, runs include time the isolate's thread waited for a core. */
  foreign_cpu_pct?: number;
  /**
   * workerd CPU (user + system, /proc) per finished request of the profiled window, ms, per process: the
   * router's (all in one: also the ledger, D1 and KV) and, split, the ledger's. The 100 µs profile's own
   * cost is in the router's.
   */
  cpu_ms_per_request?: { router: number; ledger?: number };
  requests: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  slow_threshold_ms: number;
  slow_requests: number;
  /** Longest busy runs (no idle sample) of the whole measurement, ms, longest first. */
  longest_runs_ms: number[];
  /** Busy runs over the threshold, by length. */
  runs_over: { over_5ms: number; over_10ms: number; over_25ms: number; over_50ms: number };
  /** The windows of slow requests, worst first: the busy run that held the isolate in each. */
  stalls: Stall[];
  /** Over every such run: the functions on the stack, by the time they were on it (a sample counts once per function). */
  held_by_overall: HeldBy[];
  /** Time in pauses over 1 ms between samples (the isolate not entered: its thread elsewhere), ms. */
  away_ms: number;
  /** The longest such pauses during slow requests, and what the isolate ran last before each. */
  longest_gaps: Gap[];
  gaps_over: { over_5ms: number; over_25ms: number; over_50ms: number };
};

const IDLE = new Set(["(idle)", "(program)"]);
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

/** Sample times (µs, monotonic) and, per sample, whether the isolate was busy. */
function timeline(profile: TimedProfile, idleNodes: Set<number>): { at: Float64Array; busy: Uint8Array } {
  const at = new Float64Array(profile.samples.length);
  const busy = new Uint8Array(profile.samples.length);
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    at[i] = t;
    busy[i] = idleNodes.has(id) ? 0 : 1;
  });
  return { at, busy };
}

/**
 * A pause between two samples longer than this is not time in the isolate: V8 samples only while the
 * isolate is entered, so its thread was elsewhere (workerd's own I/O, another isolate — local D1, KV, the
 * Durable Object proxy — or no core at all). Such a pause ends a busy run and is reported apart.
 */
const GAP_US = 1000;

/** The time a sample stands for: until the next one, but never a gap. */
const sampleUs = (profile: TimedProfile, i: number) => Math.min(profile.timeDeltas[i + 1] ?? 0, GAP_US);

/** Busy runs: [first sample, last sample] with no idle sample and no gap between. */
function busyRuns(busy: Uint8Array, at: Float64Array): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  let start = -1;
  for (let i = 0; i <= busy.length; i++) {
    if (start >= 0 && i < busy.length && at[i]! - at[i - 1]! > GAP_US) {
      runs.push([start, i - 1]);
      start = -1;
    }
    if (i < busy.length && busy[i]) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      runs.push([start, i - 1]);
      start = -1;
    }
  }
  return runs;
}

/**
 * Who was on the stack during samples [from, to]: every distinct function of each sample's stack (ours
 * mapped to src/…, the runtime's by name, GC as itself), weighted by the sample's time.
 */
function heldBy(
  profile: TimedProfile,
  mapper: Mapper,
  parentOf: Map<number, number>,
  byId: Map<number, Profile["nodes"][number]>,
  from: number,
  to: number,
  into = new Map<string, number>(),
) {
  for (let i = from; i <= to; i++) {
    const us = sampleUs(profile, i);
    const seen = new Set<string>();
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parentOf.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (frame.functionName === "(root)") break;
      const placed = mapper.place(frame);
      const name = placed.source.startsWith("src/") || placed.source.startsWith("node_modules/") || placed.source.startsWith("(") ? placed.fn : placed.source;
      if (seen.has(name)) continue;
      seen.add(name);
      into.set(name, (into.get(name) ?? 0) + us);
    }
  }
  return into;
}

const top = (m: Map<string, number>, n: number): HeldBy[] =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ name, ms: round(us / 1000, 2) }));

export function findStalls(
  profile: TimedProfile,
  mapper: Mapper,
  completions: Array<{ endUs: number; totalMs: number }>,
  slowMs: number,
  load: string,
): StallReport {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const idleNodes = new Set(profile.nodes.filter((n) => IDLE.has(n.callFrame.functionName)).map((n) => n.id));
  const { at, busy } = timeline(profile, idleNodes);
  const runs = busyRuns(busy, at);
  const runMs = (r: [number, number]) => (at[r[1]]! - at[r[0]]! + sampleUs(profile, r[1])) / 1000;
  const lengths = runs.map(runMs).sort((a, b) => b - a);

  const latency = stats(completions.map((c) => c.totalMs));
  const threshold = latency.p50 + slowMs;
  // Windows of slow requests (merged where they overlap), in µs on the profile's clock.
  const slow = completions
    .filter((c) => c.totalMs > threshold && c.endUs - c.totalMs * 1000 >= profile.startTime && c.endUs <= profile.endTime)
    .map((c) => [c.endUs - c.totalMs * 1000, c.endUs] as [number, number])
    .sort((a, b) => a[0] - b[0]);
  const windows: Array<{ from: number; to: number; n: number }> = [];
  for (const [from, to] of slow) {
    const last = windows.at(-1);
    if (last && from <= last.to) ((last.to = Math.max(last.to, to)), last.n++);
    else windows.push({ from, to, n: 1 });
  }
  const overall = new Map<string, number>();
  const stalls: Stall[] = [];
  for (const w of windows) {
    // The longest busy run overlapping the window.
    let best: [number, number] | undefined;
    for (const r of runs) {
      if (at[r[1]]! < w.from || at[r[0]]! > w.to) continue;
      if (!best || runMs(r) > runMs(best)) best = r;
    }
    if (!best) continue;
    const held = heldBy(profile, mapper, parentOf, byId, best[0], best[1]);
    heldBy(profile, mapper, parentOf, byId, best[0], best[1], overall);
    stalls.push({ at_s: round((at[best[0]]! - profile.startTime) / 1e6, 3), ms: round(runMs(best), 2), slow_requests: w.n, held_by: top(held, 8) });
  }
  stalls.sort((a, b) => b.ms - a.ms);
  const over = (ms: number) => lengths.filter((l) => l > ms).length;
  // Gaps: the isolate away from its thread, longest first, with what it ran last before leaving.
  const gaps: Gap[] = [];
  let awayUs = 0;
  for (let i = 1; i < at.length; i++) {
    const us = at[i]! - at[i - 1]!;
    if (us <= GAP_US) continue;
    awayUs += us;
    if (!windows.some((w) => at[i]! >= w.from && at[i - 1]! <= w.to)) continue;
    gaps.push({ at_s: round((at[i - 1]! - profile.startTime) / 1e6, 3), ms: round(us / 1000, 2), after: lastOurs(profile, mapper, parentOf, byId, i - 1) });
  }
  gaps.sort((a, b) => b.ms - a.ms);
  return {
    load,
    requests: completions.length,
    latency_p50_ms: round(latency.p50, 2),
    latency_p99_ms: round(latency.p99, 2),
    slow_threshold_ms: round(threshold, 2),
    slow_requests: slow.length,
    longest_runs_ms: lengths.slice(0, 10).map((l) => round(l, 2)),
    runs_over: { over_5ms: over(5), over_10ms: over(10), over_25ms: over(25), over_50ms: over(50) },
    stalls: stalls.slice(0, 15),
    held_by_overall: top(overall, 20),
    away_ms: round(awayUs / 1000),
    longest_gaps: gaps.slice(0, 10),
    gaps_over: {
      over_5ms: gaps.filter((g) => g.ms > 5).length,
      over_25ms: gaps.filter((g) => g.ms > 25).length,
      over_50ms: gaps.filter((g) => g.ms > 50).length,
    },
  };
}

/** The innermost function of ours (or the runtime's) on a sample's stack: what the isolate was doing when its thread left. */
function lastOurs(profile: TimedProfile, mapper: Mapper, parentOf: Map<number, number>, byId: Map<number, Profile["nodes"][number]>, i: number): string {
  let fallback = "";
  for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parentOf.get(id)) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(root)") break;
    const placed = mapper.place(frame);
    if (placed.source.startsWith("src/")) return placed.fn;
    fallback ||= placed.fn;
  }
  return fallback || "(idle)";
}

export function stallMarkdown(r: StallReport): string {
  const lines = [
    `### Stalls: ${r.load}`,
    "",
    ...(r.foreign_cpu_pct === undefined
      ? []
      : [
          `Other processes took ${r.foreign_cpu_pct} % of the machine's CPU meanwhile${r.foreign_cpu_pct > 5 ? ": the runs below include time the isolate's thread waited for a core — measure again on a quiet machine" : ""}.`,
        ]),
    ...(r.cpu_ms_per_request === undefined
      ? []
      : [
          `workerd CPU per request: router process ${r.cpu_ms_per_request.router} ms${
            r.cpu_ms_per_request.ledger === undefined
              ? " (the ledger, D1 and KV in the same process)"
              : `, ledger process ${r.cpu_ms_per_request.ledger} ms (together ${round(r.cpu_ms_per_request.router + r.cpu_ms_per_request.ledger, 3)} ms)`
          }; the profile's sampling is in the router's.`,
        ]),
    `${r.requests} requests, latency p50 ${r.latency_p50_ms} ms, p99 ${r.latency_p99_ms} ms; ${r.slow_requests} slower than ${r.slow_threshold_ms} ms (p50 + the threshold).`,
    `Busy runs of the isolate (no idle sample): longest ${r.longest_runs_ms.join(", ")} ms; over 5 ms: ${r.runs_over.over_5ms}, over 10 ms: ${r.runs_over.over_10ms}, over 25 ms: ${r.runs_over.over_25ms}, over 50 ms: ${r.runs_over.over_50ms}.`,
    "",
    "| at (s) | held the isolate (ms) | slow requests | on the stack throughout (ms) |",
    "|---:|---:|---:|---|",
    ...r.stalls.map((s) => `| ${s.at_s} | ${s.ms} | ${s.slow_requests} | ${s.held_by.map((h) => `${h.name.replaceAll("|", "\\|")} (${h.ms})`).join("<br>")} |`),
    "",
    "Over all of them, by time on the stack:",
    "",
    ...r.held_by_overall.map((h) => `- ${h.ms} ms  ${h.name}`),
    "",
    `The isolate away from its thread (pauses over 1 ms between samples: workerd's own I/O, another isolate on the thread — local D1, KV, the Durable Object proxy — or no core): ${r.away_ms} ms in all; during slow requests ${r.gaps_over.over_5ms} over 5 ms, ${r.gaps_over.over_25ms} over 25 ms, ${r.gaps_over.over_50ms} over 50 ms. The longest, with what the isolate ran last before:`,
    "",
    ...r.longest_gaps.map((g) => `- ${g.ms} ms at ${g.at_s} s, after ${g.after}`),
  ];
  return lines.join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "10" },
      concurrency: { type: "string", default: "16" },
      stream: { type: "boolean", default: false },
      tokens: { type: "string" },
      "slow-ms": { type: "string", default: "5" },
      var: { type: "string", multiple: true },
      split: { type: "boolean", default: false },
      "via-entry": { type: "boolean", default: false },
      json: { type: "string" },
    },
  });
  serveThroughEntry(values["via-entry"]);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const slowMs = Number(values["slow-ms"]);
  if (!(seconds > 0 && seconds <= 120) || !(concurrency >= 1 && concurrency <= 256) || !(slowMs > 0))
    throw new Error("--seconds 1–120, --concurrency 1–256, --slow-ms > 0");
  const tokens = Number(values.tokens ?? (values.stream ? 200 : 16));
  const vars = parseVars(values.var);
  const root = fileURLToPath(new URL("..", import.meta.url));
  const cleanup = new Cleanup();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void cleanup.runAll().finally(() => process.exit(130)));
  try {
    const bundle = await buildBundle(root, root, join(root, "bench", "out", "bundle-stalls"));
    const sim = await startSimulatorProcess(root, cleanup);
    const toml = readWranglerConfig(join(root, "wrangler.toml"));
    const cfg = { ...toml, vars: { ...toml.vars, ...vars } };
    const token = "bench-stalls-token";
    const inspectorPort = await freePort();
    const settings = { cfg, catalogPath: join(root, "catalog.json"), simulatorUrl: sim.url, adminToken: token };
    const rt = values.split
      ? await startSplitRouter("stalls", bundle, settings, cleanup, { root, d1Binding: cfg.d1Databases[0] ?? "DB", extra: { inspectorPort } })
      : await startRuntime("stalls", { ...routerOptions(bundle, settings), inspectorPort }, cleanup);
    const ledgerPid = (rt as Partial<SplitRuntime>).ledgerPid;
    await applyMigrations(rt, root, cfg.d1Databases[0] ?? "DB");
    const account = await new Admin(rt.url.origin, token).accountWithKey("stalls@bench.invalid", 1_000_000);
    const session = await routerInspector(inspectorPort);
    try {
      await session.send("Profiler.enable");
      await session.send("Profiler.setSamplingInterval", { interval: 100 });
      const routerTarget: Target = { kind: "router", origin: rt.url, path: "/api/v1/chat/completions" };
      const body = chatBody({ model: "meta-llama/llama-3.1-8b-instruct", stream: values.stream, tokens, words: "Stalls" });
      const load = (ms: number, onCompletion?: (c: Completion) => void) =>
        runLoad({
          origin: rt.url,
          concurrency,
          warmupMs: 0,
          durationMs: ms,
          timeoutMs: 60_000,
          stream: values.stream,
          request: () => chatRequest(routerTarget, account.key, body),
          onCompletion,
        });
      await load(2000); // warm-up, not profiled
      const done: Array<{ endUs: number; totalMs: number }> = [];
      let finished = 0;
      await session.send("Profiler.start");
      const cpuBefore = cpuSnapshot();
      const routerCpu0 = cpuMs(rt.workerdPid);
      const ledgerCpu0 = cpuMs(ledgerPid);
      await load(seconds * 1000, (c) => {
        finished++;
        if (c.ok && c.phase === "measure") done.push({ endUs: Number(process.hrtime.bigint() / 1000n), totalMs: c.totalMs });
      });
      const perRequest = (ms: number) => round(ms / Math.max(1, finished), 3);
      const cpu = {
        router: perRequest(cpuMs(rt.workerdPid) - routerCpu0),
        ...(ledgerPid === undefined ? {} : { ledger: perRequest(cpuMs(ledgerPid) - ledgerCpu0) }),
      };
      const foreign = round(foreignCpuPercent(cpuBefore, cpuSnapshot(), os.cpus().length));
      const { profile } = await session.send<{ profile: TimedProfile }>("Profiler.stop", {}, 120_000);
      const name = `${values.stream ? `${tokens}-chunk streams` : "non-stream"}, concurrency ${concurrency}, ${seconds} s, ${
        values.split ? "split (the ledger and its D1 in their own workerd)" : "all in one workerd"
      }${
        Object.keys(vars).length
          ? ` (${Object.entries(vars)
              .map(([k, v]) => `${k}=${v}`)
              .join(", ")})`
          : ""
      }`;
      const report = {
        ...findStalls(profile, new Mapper(basename(bundle.main), `${bundle.main}.map`), done, slowMs, name),
        foreign_cpu_pct: foreign,
        ...(rt.workerdPid === undefined ? {} : { cpu_ms_per_request: cpu }),
      };
      console.log(stallMarkdown(report));
      if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
    } finally {
      session.close();
    }
  } finally {
    await cleanup.runAll();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
