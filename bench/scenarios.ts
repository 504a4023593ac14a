// The scenarios of `npm run bench` (issue 5). Each returns plain figures; run.ts starts the processes and
// report.ts turns the figures into tables and targets.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { burst, runLoad, stats, type LoadResult, type RequestSpec, type Stats } from "./load.ts";
import { cpus } from "node:os";
import { cpuSnapshot, foreignCpuPercent, memoryOf, resetPeak, startRuntime, type Cleanup, type Runtime } from "./processes.ts";
import type { Admin, Audit } from "./router.ts";
import type { MiniflareOptions } from "miniflare";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Who a scenario runs against: the simulator directly, the pass-through Worker, the floor relay (streams), Switchyard, or a peer gateway (scenario peers). */
export type TargetKind = "simulator" | "passthrough" | "floor" | "router" | "portkey";
/**
 * `headers`: extra request headers (the floor relay's `x-floor-variant`, Portkey's provider and host).
 * `workerdPid`: the process whose CPU closedLoop counts per request — a Worker's workerd, or a peer gateway's Node process.
 */
export type Target = { kind: TargetKind; origin: URL; path: string; workerdPid?: number; headers?: Record<string, string> };

export type Durations = {
  warmupMs: number;
  nonStreamMs: number;
  streamMs: number;
  /** Scenario 3: how long each slow stream stays open (one chunk every 50 ms). */
  slowStreamMs: number;
  ledgerMs: number;
  startupReps: number;
};

export type Body = { model: string; stream: boolean; tokens: number; tps?: number; words?: string; extra?: string };

export function chatBody(b: Body): Buffer {
  const directives = `[sim tokens=${b.tokens}]${b.tps ? ` [sim tps=${b.tps}]` : ""}${b.extra ? ` ${b.extra}` : ""}`;
  const request: Record<string, unknown> = {
    model: b.model,
    messages: [{ role: "user", content: `${b.words ?? "Benchmark request"} ${directives}` }],
  };
  // Every target gets the same body; the router asks the carrier for usage anyway, so streams always carry it.
  if (b.stream) Object.assign(request, { stream: true, stream_options: { include_usage: true } });
  return Buffer.from(JSON.stringify(request));
}

export function chatRequest(target: Target, key: string, body: Buffer): RequestSpec {
  return { path: target.path, headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...target.headers }, body };
}

/** CPU time (user + system) of a process so far, ms; NaN when unreadable. */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat (utime, stime), counted from after the command name: indexes 11 and 12.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

export type Measured = LoadResult & {
  /** CPU the Worker runtime (workerd) spent per finished request, warm-up included; absent for the simulator. */
  runtime_cpu_ms_per_request?: number;
  /** CPU the simulator process spent per finished request. */
  simulator_cpu_ms_per_request: number;
  /** Share of the machine's CPU other processes (not this benchmark's) used meanwhile, %: noise. */
  foreign_cpu_pct: number;
};

export async function closedLoop(
  target: Target,
  opts: { concurrency: number; warmupMs: number; durationMs: number; stream: boolean; key: string; body: Buffer; simulatorPid: number },
): Promise<Measured> {
  let finished = 0;
  const cpu0 = cpuMs(target.workerdPid);
  const sim0 = cpuMs(opts.simulatorPid);
  const machine0 = cpuSnapshot();
  const result = await runLoad({
    origin: target.origin,
    concurrency: opts.concurrency,
    warmupMs: opts.warmupMs,
    durationMs: opts.durationMs,
    timeoutMs: 60_000,
    stream: opts.stream,
    request: () => chatRequest(target, opts.key, opts.body),
    onCompletion: () => finished++,
  });
  const perRequest = (ms: number) => (finished > 0 ? ms / finished : NaN);
  return {
    ...result,
    ...(target.workerdPid !== undefined ? { runtime_cpu_ms_per_request: perRequest(cpuMs(target.workerdPid) - cpu0) } : {}),
    simulator_cpu_ms_per_request: perRequest(cpuMs(opts.simulatorPid) - sim0),
    foreign_cpu_pct: foreignCpuPercent(machine0, cpuSnapshot(), cpus().length),
  };
}

export type OpenStreams = {
  streams: number;
  ok: number;
  errors: number;
  error_kinds: Record<string, number>;
  /** Whether every stream had its first byte before the first one ended (all open at once). */
  all_open_together: boolean;
  idle_rss_mb: number;
  peak_rss_mb: number;
  after_rss_mb: number;
  /** idle × 1.5 + 50 MB: the target. */
  limit_mb: number;
  /** How peak was read: VmHWM after a reset (clear_refs), or the highest 50 ms sample. */
  peak_source: "VmHWM" | "samples";
  ttfb_ms: Stats;
  stream_ms: Stats;
  wall_s: number;
  /** Share of the machine's CPU other processes used meanwhile, %. */
  foreign_cpu_pct: number;
};

/** Scenario 3: `n` slow streams at once; the runtime's RSS sampled every 50 ms against its idle RSS. */
export async function openStreams(target: Target, n: number, tokens: number, tps: number, key: string, model: string): Promise<OpenStreams> {
  const pid = target.workerdPid;
  if (pid === undefined) throw new Error(`no workerd process found for ${target.kind}`);
  await sleep(1000); // let the previous scenario's work drain
  const idle = memoryOf(pid)!.rssKb;
  const reset = resetPeak(pid);
  let peakSampled = idle;
  const sampler = setInterval(() => {
    const m = memoryOf(pid);
    if (m) peakSampled = Math.max(peakSampled, m.rssKb);
  }, 50);
  const body = chatBody({ model, stream: true, tokens, tps, words: "Slow stream" });
  const started = performance.now();
  const machine0 = cpuSnapshot();
  const results = await burst(target.origin, n, () => chatRequest(target, key, body), { stream: true, timeoutMs: (tokens / tps) * 1000 + 60_000 });
  const wall = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const end = memoryOf(pid)!;
  const peakKb = reset ? Math.max(end.hwmKb, peakSampled) : peakSampled;
  await sleep(500);
  const after = memoryOf(pid)!.rssKb;
  const ok = results.filter((r) => r.ok);
  const kinds: Record<string, number> = {};
  for (const r of results) if (!r.ok) kinds[r.error!] = (kinds[r.error!] ?? 0) + 1;
  const firstEnd = Math.min(...results.map((r) => r.totalMs));
  const lastFirstByte = Math.max(...results.map((r) => r.ttfbMs));
  return {
    streams: n,
    ok: ok.length,
    errors: n - ok.length,
    error_kinds: kinds,
    all_open_together: lastFirstByte < firstEnd,
    idle_rss_mb: idle / 1024,
    peak_rss_mb: peakKb / 1024,
    after_rss_mb: after / 1024,
    limit_mb: (idle / 1024) * 1.5 + 50,
    peak_source: reset ? "VmHWM" : "samples",
    ttfb_ms: stats(ok.map((r) => r.ttfbMs)),
    stream_ms: stats(ok.map((r) => r.totalMs)),
    wall_s: wall,
    foreign_cpu_pct: foreignCpuPercent(machine0, cpuSnapshot(), cpus().length),
  };
}

export type LedgerRun = {
  accounts: number;
  concurrency: number;
  duration_s: number;
  /** Successful paid completions in the measured run (each one debit). */
  debits: number;
  /** Every answered request of the run (each leaves one generation record). */
  requests_total: number;
  client_rps: number;
  /** debits ÷ (measure start → the moment the ledgers' usage had grown by every returned cost). */
  settled_debits_per_s: number;
  /** How long after the last response the last debit was visible in the ledger, s. */
  settle_lag_s: number;
  /** Whether each account's usage grew by exactly the sum of the `usage.cost` its responses returned. */
  usage_exact: boolean;
  usage_delta_nano: number;
  returned_cost_nano: number;
  /** Whether every request left exactly one generation record (D1 rows + outbox) and D1's cost sum moved by the same amount. */
  records_exact: boolean;
  records_delta: number;
  records_cost_delta_nano: number;
  errors: number;
  error_kinds: Record<string, number>;
  latency_ms: Stats;
  /** Share of the machine's CPU other processes used during the measured run, %. */
  foreign_cpu_pct: number;
  notes: string[];
};

type Tally = { costNano: number; debits: number; answered: number };

/** Scenario 4: paid non-stream completions at `concurrency` spread over `accounts`, then the ledger audited. */
export async function ledgerThroughput(
  target: Target,
  admin: Admin,
  accounts: Array<{ id: string; key: string }>,
  opts: { concurrency: number; warmupMs: number; durationMs: number; model: string },
): Promise<LedgerRun> {
  const notes: string[] = [];
  const body = chatBody({ model: opts.model, stream: false, tokens: 16, words: "Ledger" });
  const accountOf = (w: number) => accounts[w % accounts.length]!;
  const audits = () => Promise.all(accounts.map((a) => admin.audit(a.id)));
  const newTallies = () => new Map(accounts.map((a) => [a.id, { costNano: 0, debits: 0, answered: 0 } satisfies Tally]));

  const loop = (durationMs: number, tallies: Map<string, Tally>) =>
    runLoad({
      origin: target.origin,
      concurrency: opts.concurrency,
      warmupMs: 0,
      durationMs,
      timeoutMs: 60_000,
      stream: false,
      keepBody: true,
      request: (worker) => chatRequest(target, accountOf(worker).key, body),
      onCompletion: (c) => {
        const t = tallies.get(accountOf(c.worker).id)!;
        if (c.status !== 0) t.answered++;
        if (!c.ok) return;
        const cost = (JSON.parse(c.body.toString("utf8")) as { usage?: { cost?: number } }).usage?.cost;
        if (typeof cost !== "number") return;
        t.costNano += Math.round(cost * 1e9);
        t.debits++;
      },
    });

  /** Polls until every account's usage grew by its tally (or `limitMs` passes); when it got there, ms epoch. */
  const untilSettled = async (base: Audit[], tallies: Map<string, Tally>, limitMs: number): Promise<{ at: number; audits: Audit[]; reached: boolean }> => {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const now = await audits();
      const reached = now.every((a, i) => a.usage_nano - base[i]!.usage_nano >= tallies.get(a.id)!.costNano);
      if (reached || Date.now() > deadline) return { at: Date.now(), audits: now, reached };
      await sleep(accounts.length > 8 ? 200 : 50);
    }
  };

  const a0 = await audits();
  const warm = newTallies();
  await loop(opts.warmupMs, warm);
  const warmSettled = await untilSettled(a0, warm, 30_000);
  if (!warmSettled.reached) notes.push("warm-up debits did not all reach the ledger within 30 s");

  /** Audits every account until `done` holds for all of them, or 30 s have passed. */
  const auditsUntil = async (done: (list: Audit[]) => boolean): Promise<{ list: Audit[]; done: boolean }> => {
    const deadline = Date.now() + 30_000;
    let list = await audits();
    while (!done(list) && Date.now() < deadline) {
      await sleep(250);
      list = await audits();
    }
    return { list, done: done(list) };
  };

  // The baseline needs warm-up records in D1, not in an outbox: the cost check below reads D1 only.
  const baseline = await auditsUntil((list) => list.every((a) => a.records_pending === 0));
  if (!baseline.done) notes.push("warm-up records did not all reach D1 within 30 s");
  const a1 = baseline.list;
  const tallies = newTallies();
  const t0 = Date.now();
  const machine0 = cpuSnapshot();
  const result = await loop(opts.durationMs, tallies);
  const foreign = foreignCpuPercent(machine0, cpuSnapshot(), cpus().length);
  const tEnd = Date.now();
  const settled = await untilSettled(a1, tallies, 60_000);
  if (!settled.reached) notes.push("measured debits did not all reach the ledger within 60 s");
  await sleep(500);
  // Records reach D1 from the ledger's outbox in batches: wait (bounded) until each account's count is complete.
  const { list: a2 } = await auditsUntil((list) =>
    list.every((a, i) => a.records + a.records_pending - (a1[i]!.records + a1[i]!.records_pending) >= tallies.get(a.id)!.answered && a.records_pending === 0),
  );
  let usageDelta = 0;
  let returned = 0;
  let recordsDelta = 0;
  let recordsCost = 0;
  let answered = 0;
  let debits = 0;
  let usageExact = true;
  let recordsExact = true;
  a2.forEach((a, i) => {
    const t = tallies.get(a.id)!;
    const before = a1[i]!;
    const du = a.usage_nano - before.usage_nano;
    const dr = a.records + a.records_pending - before.records - before.records_pending;
    const dc = a.records_cost_nano - before.records_cost_nano;
    usageDelta += du;
    returned += t.costNano;
    recordsDelta += dr;
    recordsCost += dc;
    answered += t.answered;
    debits += t.debits;
    if (du !== t.costNano) usageExact = false;
    if (dr !== t.answered || dc !== t.costNano) recordsExact = false;
  });
  const seconds = (settled.at - t0) / 1000;
  return {
    accounts: accounts.length,
    concurrency: opts.concurrency,
    duration_s: opts.durationMs / 1000,
    debits,
    requests_total: answered,
    client_rps: result.rps,
    settled_debits_per_s: debits / seconds,
    settle_lag_s: Math.max(0, (settled.at - tEnd) / 1000),
    usage_exact: usageExact,
    usage_delta_nano: usageDelta,
    returned_cost_nano: returned,
    records_exact: recordsExact,
    records_delta: recordsDelta,
    records_cost_delta_nano: recordsCost,
    errors: result.errors + result.errors_outside_window,
    error_kinds: result.error_kinds,
    latency_ms: result.latency_ms,
    foreign_cpu_pct: foreign,
    notes,
  };
}

export type Startup = {
  reps: number;
  /** new Miniflare → ready (workerd up, config and modules loaded), ms, median. */
  ready_ms: number;
  /** ready → the first 200, ms, median. */
  first_response_ms: number;
  /** new Miniflare → first 200, ms, median. */
  total_ms: number;
  /** workerd RSS after the first response, MB, median. */
  rss_mb: number;
  /** Importing the module in a fresh Node process (V8 parse + compile + top-level run), ms, median. */
  module_eval_ms: number;
};

const median = (xs: number[]) => stats(xs).p50;

/** Scenario 5: a fresh Miniflare instance (in-memory storage): new Miniflare → ready → first 200 from `path`. */
export async function startOnce(
  name: string,
  options: MiniflareOptions,
  path: string,
  cleanup: Cleanup,
): Promise<{ ready: number; first: number; total: number; rss: number }> {
  const t0 = performance.now();
  const rt: Runtime = await startRuntime(`${name} (start-up)`, options, cleanup);
  try {
    const tReady = performance.now();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await fetch(new URL(path, rt.url), { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
      await res?.arrayBuffer();
      if (res?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${name}: no 200 from ${path} within 30 s (last status ${res?.status})`);
      await sleep(20);
    }
    const tFirst = performance.now();
    return { ready: tReady - t0, first: tFirst - tReady, total: tFirst - t0, rss: rt.workerdPid !== undefined ? memoryOf(rt.workerdPid)!.rssKb / 1024 : NaN };
  } finally {
    await rt.stop();
  }
}

/** Medians of several `startOnce` runs, and the module's V8 evaluation time. */
export function startupSummary(runs: Array<{ ready: number; first: number; total: number; rss: number }>, evalMs: number): Startup {
  return {
    reps: runs.length,
    ready_ms: median(runs.map((r) => r.ready)),
    first_response_ms: median(runs.map((r) => r.first)),
    total_ms: median(runs.map((r) => r.total)),
    rss_mb: median(runs.map((r) => r.rss)),
    module_eval_ms: evalMs,
  };
}

/**
 * Module start-up as V8 sees it: a fresh Node process imports the module (parse, compile, run the top level)
 * `reps` times; `cloudflare:workers` is replaced by a stub class. Returns the median, ms.
 */
export function moduleEvalMs(source: string, scratch: string, reps: number): number {
  writeFileSync(
    scratch,
    source.replaceAll(/from\s*"cloudflare:workers"/g, 'from"data:text/javascript,export class DurableObject{constructor(c,e){this.ctx=c;this.env=e}}"'),
  );
  const code = `const t=performance.now();await import(${JSON.stringify(pathToFileURL(scratch).href)});process.stdout.write(String(performance.now()-t));`;
  const times: number[] = [];
  for (let i = 0; i < reps; i++) times.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8", timeout: 30_000 })));
  return median(times);
}
