// The write-ceiling scenario's arithmetic, apart from any process (bench/ceiling.ts drives it; the node
// test test/node/bench-ceiling.test.ts checks it): how a ledger's outbox fills and when its alarm flushes,
// the rate a step achieved, whether it kept up, the summary over a set of runs and its markdown.
import { stats } from "./load.ts";
import { spread, type Spread } from "./peer-gateways.ts";

/** Offered rates, records/s over all ledgers, stepped up until one is not kept up. */
export const DEFAULT_RATES = [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000];
export const DEFAULT_LEDGERS = [1, 4, 16];
export const DEFAULT_BATCHES = [100, 500, 2000];
/** A step keeps up when it achieves at least this share of what it offered. */
export const KEEP_UP = 0.9;

/** A comma-separated list of whole numbers ≥ 1 (a flag's value), or the default when absent. */
export function parseList(value: string | undefined, fallback: number[], name: string): number[] {
  if (value === undefined) return fallback;
  const list = value.split(",").map((s) => Number(s.trim()));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`${name} takes whole numbers ≥ 1, comma-separated (e.g. 1,4,16), not "${value}"`);
  return list;
}

/**
 * One ledger's outbox, fed at a steady rate from `startMs` (records arrive one by one, the k-th at
 * `startMs + k · 1000 / ratePerS`), flushed as LedgerObject's alarm flushes it: the first settle into an
 * empty outbox sets the alarm `delayMs` later (later settles leave it); the alarm copies at most
 * `maxBatch` of the oldest records in one D1 batch, and while records are left it fires again at once.
 */
export type Outbox = { ratePerS: number; startMs: number; delayMs: number; maxBatch: number; taken: number };

export function outbox(ratePerS: number, startMs: number, delayMs: number, maxBatch: number): Outbox {
  if (!(ratePerS > 0) || maxBatch < 1) throw new Error("an outbox needs a positive rate and batch size");
  return { ratePerS, startMs, delayMs, maxBatch, taken: 0 };
}

/** Records that have arrived by `nowMs`. */
export function arrivedBy(o: Outbox, nowMs: number): number {
  if (nowMs < o.startMs) return 0;
  return Math.floor(((nowMs - o.startMs) * o.ratePerS) / 1000 + 1e-9);
}

/** When the k-th record (1-based) arrives. */
export function arrivalOf(o: Outbox, k: number): number {
  return o.startMs + (k * 1000) / o.ratePerS;
}

/**
 * When the ledger flushes next: at once after a flush that left records behind; otherwise when the
 * alarm the next record sets goes off (`delayMs` after it arrives), and not before `nowMs`.
 */
export function nextFlushAt(o: Outbox, nowMs: number, afterFlush: boolean): number {
  if (afterFlush && arrivedBy(o, nowMs) > o.taken) return nowMs;
  return Math.max(nowMs, arrivalOf(o, o.taken + 1) + o.delayMs);
}

/** The alarm fires at `nowMs`: it takes the oldest records, at most `maxBatch`, and returns how many. */
export function takeBatch(o: Outbox, nowMs: number): number {
  const n = Math.min(Math.max(0, arrivedBy(o, nowMs) - o.taken), o.maxBatch);
  o.taken += n;
  return n;
}

/** One flush as the bench saw it. Times in ms on the bench's monotonic clock. */
export type Batch = { ledger: number; startMs: number; endMs: number; n: number; ok: boolean; d1Ms: number; rowsWritten: number };

/**
 * Records per second one ledger's flushes completed within [w0, w1], measured over whole periods: a
 * ledger below its database's ceiling flushes in bursts (the alarm's batch, then at once what came during
 * it, …) and then waits for its next alarm. The rate runs from the end of one burst to the end of a later
 * one (a completion after which the ledger waited at least `idleMs`): the records of the completions
 * between, over the time between, so neither edge of the window cuts a burst. A ledger that never waited
 * (it flushed without pause: at or past the ceiling) is measured the same way from its first completion in
 * the window to its last. With fewer than two such ends, or ends closer than a quarter of the window: its
 * records over the window.
 */
export function ledgerRate(batches: Array<Pick<Batch, "startMs" | "endMs" | "n" | "ok">>, w0: number, w1: number, idleMs: number): number {
  const all = [...batches].sort((a, b) => a.startMs - b.startMs);
  const done = all.filter((b) => b.ok && b.endMs >= w0 && b.endMs <= w1);
  if (done.length === 0) return 0;
  // The end of a burst: the ledger's next flush started at least idleMs after this one ended.
  const waitedAfter = (b: (typeof all)[number]) => {
    const next = all[all.indexOf(b) + 1];
    return next !== undefined && next.startMs - b.endMs >= idleMs;
  };
  const bursts = done.filter(waitedAfter);
  const ends = bursts.length >= 2 ? bursts : done.some(waitedAfter) ? [] : done;
  const first = ends[0];
  const last = ends[ends.length - 1];
  if (!first || !last || ends.length < 2 || last.endMs - first.endMs < (w1 - w0) / 4) return (done.reduce((s, b) => s + b.n, 0) * 1000) / (w1 - w0);
  const between = done.filter((b) => b.endMs > first.endMs && b.endMs <= last.endMs);
  return (between.reduce((s, b) => s + b.n, 0) * 1000) / (last.endMs - first.endMs);
}

export type StepFigures = {
  /** Records/s over all ledgers, offered and achieved (the sum of each ledger's rate in the window). */
  offered: number;
  achieved: number;
  kept_up: boolean;
  /** Batches and records completed in the window. */
  batches: number;
  records: number;
  batch_mean: number;
  batch_p50: number;
  batch_max: number;
  /** Share of the window's batches that were full (maxBatch records), %. */
  full_pct: number;
  /** A flush as the ledger sees it (send → D1 batch done → answer), ms. */
  latency_p50_ms: number;
  latency_p99_ms: number;
  /** D1's own time for the batch's statements (the result meta's `duration`, summed), ms. */
  d1_ms_p50: number;
  /** D1's own time per 1,000 records over the window's batches (Σ duration ÷ Σ records): what bounds one database's rate. */
  d1_ms_per_1k: number;
  /** D1 rows written per record (the meta's `rows_written`: table rows and index entries, both tables). */
  rows_written_per_record: number;
  /** Records that had arrived by the end of the window and were not yet in D1, and as seconds of the offered rate. */
  behind_records: number;
  behind_s: number;
  failed_batches: number;
};

/** The figures of one step: its batches (all of them; the window picks its own), what had arrived by `w1`. */
export function stepFigures(
  batches: Batch[],
  o: { offered: number; ledgers: number; maxBatch: number; w0: number; w1: number; arrivedByEnd: number; delayMs: number },
): StepFigures {
  const inWindow = batches.filter((b) => b.ok && b.endMs >= o.w0 && b.endMs <= o.w1);
  let achieved = 0;
  for (let l = 0; l < o.ledgers; l++)
    achieved += ledgerRate(
      batches.filter((b) => b.ledger === l),
      o.w0,
      o.w1,
      o.delayMs / 2,
    );
  const sizes = stats(inWindow.map((b) => b.n));
  const latency = stats(inWindow.map((b) => b.endMs - b.startMs));
  const records = inWindow.reduce((s, b) => s + b.n, 0);
  const doneByEnd = batches.filter((b) => b.ok && b.endMs <= o.w1).reduce((s, b) => s + b.n, 0);
  const behind = Math.max(0, o.arrivedByEnd - doneByEnd);
  return {
    offered: o.offered,
    achieved,
    kept_up: keptUp(achieved, o.offered),
    batches: inWindow.length,
    records,
    batch_mean: sizes.mean,
    batch_p50: sizes.p50,
    batch_max: sizes.max,
    full_pct: inWindow.length === 0 ? NaN : (inWindow.filter((b) => b.n >= o.maxBatch).length / inWindow.length) * 100,
    latency_p50_ms: latency.p50,
    latency_p99_ms: latency.p99,
    d1_ms_p50: stats(inWindow.map((b) => b.d1Ms)).p50,
    d1_ms_per_1k: records === 0 ? NaN : (inWindow.reduce((s, b) => s + b.d1Ms, 0) / records) * 1000,
    rows_written_per_record: records === 0 ? NaN : inWindow.reduce((s, b) => s + b.rowsWritten, 0) / records,
    behind_records: behind,
    behind_s: behind / o.offered,
    failed_batches: batches.filter((b) => !b.ok).length,
  };
}

export function keptUp(achieved: number, offered: number): boolean {
  return achieved >= KEEP_UP * offered;
}

/** The next offered rate after a step, or undefined: none after a step not kept up, nor past the ladder's end. */
export function nextRate(rates: number[], step: { offered: number; kept_up: boolean }): number | undefined {
  if (!step.kept_up) return undefined;
  return rates.find((r) => r > step.offered);
}

export type Step = StepFigures & {
  /** D1's growth over the step (warm-up and drain included), bytes per record flushed; other processes' CPU share, %; workerd's, % of one core. */
  bytes_per_record: number;
  foreign_cpu_pct: number;
  workerd_cpu_pct: number;
};

/** The health fold once over a database: its attempts, and per statement (uptime windows, percentiles, prune) D1's time and rows read. */
export type Fold = { attempts: number; statements: Array<{ d1_ms: number; rows_read: number }> };

/** D1's time of one fold statement per 100,000 attempts in the database, ms. */
export function foldMsPer100k(fold: Fold | undefined, statement: number): number {
  const ms = fold?.statements[statement]?.d1_ms;
  return fold && fold.attempts > 0 && ms !== undefined ? (ms / fold.attempts) * 100_000 : NaN;
}

/** D1 rows read by the fold's two queries per attempt in the database. */
function foldRowsPerAttempt(c: ConfigRun): number {
  const f = c.fold;
  if (!f || f.attempts === 0) return NaN;
  return ((f.statements[0]?.rows_read ?? NaN) + (f.statements[1]?.rows_read ?? NaN)) / f.attempts;
}

/** One database (a fresh local D1): `ledgers` flushing at most `maxBatch` records each, at rising rates. */
export type ConfigRun = {
  ledgers: number;
  max_batch: number;
  steps: Step[];
  /** D1's size (the meta's size_after) after the migrations and at the end, and the records then in it. */
  bytes_start: number;
  bytes_end: number;
  records_end: number;
  attempts_end: number;
  /**
   * The Cron Trigger's health fold (once a minute) run once over the database as the steps left it: every
   * attempt in it is within the fold's day window, as a day of traffic would be. D1's time and rows read.
   */
  fold?: Fold;
};

/**
 * The most a database sustained: over its steps, the achieved rate but never more than the offered one
 * (a step may achieve more than it offers for a few seconds while it catches up with records its warm-up
 * left behind: that is not a rate it sustains). Saturated when some step fell short; otherwise the
 * ceiling lies above the last rate tried.
 */
export function ceilingOf(c: ConfigRun): { records_per_s: number; saturated: boolean; step: Step | undefined } {
  let best: Step | undefined;
  const sustained = (s: Step) => Math.min(s.achieved, s.offered);
  for (const s of c.steps) if (!best || sustained(s) > sustained(best)) best = s;
  return { records_per_s: best ? sustained(best) : NaN, saturated: c.steps.some((s) => !s.kept_up), step: best };
}

export function bytesPerRecord(c: ConfigRun): number {
  return c.records_end > 0 ? (c.bytes_end - c.bytes_start) / c.records_end : NaN;
}

export type CeilingRun = { index: number; started_at: string; configs: ConfigRun[]; foreign_cpu_pct: number; wall_s: number };

export type RecordShape = {
  /** A record's JSON as the ledger stores and flushes it, bytes (UTF-8), and its carrier attempts. */
  bytes_mean: number;
  bytes_p50: number;
  bytes_max: number;
  attempts_mean: number;
  /** D1's growth per record (the meta's size_after): as flushed (the attempts' rows too), and kept once the attempts are pruned. */
  d1_bytes_flushed: number;
  d1_bytes_kept: number;
};

export type CeilingSet = {
  format: "switchyard-bench-ceiling/1";
  started_at: string;
  args: string[];
  source: string;
  machine: { cpu: string; cores: number; node: string; workerd: string };
  settings: { rates: number[]; ledgers: number[]; batches: number[]; warmup_ms: number; window_ms: number; flush_delay_ms: number };
  record: RecordShape;
  runs: CeilingRun[];
};

const int = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "–");
const fix = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : "–");
function spreadOf(s: Spread, show: (v: number) => string): string {
  if (!Number.isFinite(s.median)) return "–";
  return s.min === s.max ? show(s.median) : `${show(s.median)} (${show(s.min)} – ${show(s.max)})`;
}
const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

/** Per database layout (ledgers × batch size) over the runs: its ceiling and what a flush looked like there. */
export type ConfigSummary = {
  ledgers: number;
  max_batch: number;
  runs: number;
  /** Runs in which some step fell short: the ceiling was reached (else it is above the last rate tried). */
  saturated_runs: number;
  ceiling: Spread;
  /** At the step that achieved the most: batch mean, latency p50/p99; over the whole database: bytes per record, rows written per record. */
  batch_mean: Spread;
  latency_p50_ms: Spread;
  latency_p99_ms: Spread;
  d1_ms_per_1k: Spread;
  bytes_per_record: Spread;
  rows_written_per_record: Spread;
  /** The lowest offered rate some run did not keep up with. */
  first_short: number | undefined;
  /** The health fold over the database at the end: attempts in its window; D1's time per 100,000 of them (ms) in its uptime statement (a day's window) and its percentile one (30 minutes). */
  fold_attempts: Spread;
  fold_uptime_ms_per_100k: Spread;
  fold_percentiles_ms_per_100k: Spread;
  /** D1 rows read (what D1 bills) per attempt in the database, the two statements together. */
  fold_rows_read_per_attempt: Spread;
};

export function summarize(set: Pick<CeilingSet, "runs">): ConfigSummary[] {
  const keys: Array<[number, number]> = [];
  for (const r of set.runs) for (const c of r.configs) if (!keys.some(([l, b]) => l === c.ledgers && b === c.max_batch)) keys.push([c.ledgers, c.max_batch]);
  return keys.map(([ledgers, maxBatch]) => {
    const configs = set.runs.flatMap((r) => r.configs.filter((c) => c.ledgers === ledgers && c.max_batch === maxBatch));
    const ceilings = configs.map(ceilingOf);
    const short = configs.flatMap((c) => c.steps.filter((s) => !s.kept_up).map((s) => s.offered));
    return {
      ledgers,
      max_batch: maxBatch,
      runs: configs.length,
      saturated_runs: ceilings.filter((c) => c.saturated).length,
      ceiling: spread(ceilings.map((c) => c.records_per_s)),
      batch_mean: spread(ceilings.map((c) => c.step?.batch_mean ?? NaN)),
      latency_p50_ms: spread(ceilings.map((c) => c.step?.latency_p50_ms ?? NaN)),
      latency_p99_ms: spread(ceilings.map((c) => c.step?.latency_p99_ms ?? NaN)),
      d1_ms_per_1k: spread(ceilings.map((c) => c.step?.d1_ms_per_1k ?? NaN)),
      bytes_per_record: spread(configs.map(bytesPerRecord)),
      rows_written_per_record: spread(configs.flatMap((c) => c.steps.map((s) => s.rows_written_per_record))),
      first_short: short.length > 0 ? Math.min(...short) : undefined,
      fold_attempts: spread(configs.map((c) => c.fold?.attempts ?? NaN)),
      fold_uptime_ms_per_100k: spread(configs.map((c) => foldMsPer100k(c.fold, 0))),
      fold_percentiles_ms_per_100k: spread(configs.map((c) => foldMsPer100k(c.fold, 1))),
      fold_rows_read_per_attempt: spread(configs.map(foldRowsPerAttempt)),
    };
  });
}

/** Per database layout and offered rate over the runs that reached that rate. */
export type StepSummary = {
  ledgers: number;
  max_batch: number;
  offered: number;
  runs: number;
  kept_up_runs: number;
  achieved: Spread;
  batch_mean: Spread;
  batch_max: Spread;
  latency_p50_ms: Spread;
  latency_p99_ms: Spread;
  bytes_per_record: Spread;
  behind_s: Spread;
  workerd_cpu_pct: Spread;
  foreign_cpu_pct: Spread;
};

export function summarizeSteps(set: Pick<CeilingSet, "runs">): StepSummary[] {
  const out: StepSummary[] = [];
  for (const c of summarize(set)) {
    const configs = set.runs.flatMap((r) => r.configs.filter((x) => x.ledgers === c.ledgers && x.max_batch === c.max_batch));
    const offered = [...new Set(configs.flatMap((x) => x.steps.map((s) => s.offered)))].sort((a, b) => a - b);
    for (const rate of offered) {
      const steps = configs.flatMap((x) => x.steps.filter((s) => s.offered === rate));
      const of = (pick: (s: Step) => number) => spread(steps.map(pick));
      out.push({
        ledgers: c.ledgers,
        max_batch: c.max_batch,
        offered: rate,
        runs: steps.length,
        kept_up_runs: steps.filter((s) => s.kept_up).length,
        achieved: of((s) => s.achieved),
        batch_mean: of((s) => s.batch_mean),
        batch_max: of((s) => s.batch_max),
        latency_p50_ms: of((s) => s.latency_p50_ms),
        latency_p99_ms: of((s) => s.latency_p99_ms),
        bytes_per_record: of((s) => s.bytes_per_record),
        behind_s: of((s) => s.behind_s),
        workerd_cpu_pct: of((s) => s.workerd_cpu_pct),
        foreign_cpu_pct: of((s) => s.foreign_cpu_pct),
      });
    }
  }
  return out;
}

/** The highest ceiling of any layout (the database's): median over the runs. */
export function databaseCeiling(summaries: ConfigSummary[]): ConfigSummary | undefined {
  let best: ConfigSummary | undefined;
  for (const s of summaries) if (Number.isFinite(s.ceiling.median) && (!best || s.ceiling.median > best.ceiling.median)) best = s;
  return best;
}

export function ceilingMarkdown(set: CeilingSet): string {
  const runs = set.runs.length;
  const s = set.settings;
  const configs = summarize(set);
  const steps = summarizeSteps(set);
  const best = databaseCeiling(configs);
  const foreign = spread(set.runs.map((r) => r.foreign_cpu_pct));
  const out: string[] = [];
  out.push(
    `Write ceiling of one local D1 (${runs} run${runs === 1 ? "" : "s"}; medians, ranges in brackets; ${set.source}; ${set.machine.cores} × ${set.machine.cpu}, workerd ${set.machine.workerd}). ` +
      `Synthetic records ${int(set.record.bytes_mean)} B of JSON on average (max ${int(set.record.bytes_max)}), ${fix(set.record.attempts_mean, 2)} carrier attempts each; ` +
      `in D1 ${int(set.record.d1_bytes_flushed)} B a record as flushed (its attempts' rows included), ${int(set.record.d1_bytes_kept)} B once the attempts are pruned (a day later). ` +
      `Each step: ${fix(s.warmup_ms / 1000)} s warm-up, ${fix(s.window_ms / 1000)} s measured; a ledger's alarm ${s.flush_delay_ms} ms after the first record into an empty outbox, at once while records are left; ` +
      `a step keeps up at ≥ ${KEEP_UP * 100} % of the offered rate. Other processes took ${spreadOf(foreign, (v) => fix(v, 0))} % of the CPU over a run.`,
  );
  out.push("");
  out.push(
    table(
      [
        "ledgers × batch",
        "ceiling (records/s)",
        "saturated in",
        "first rate not kept up",
        "batch at ceiling",
        "flush p50 (ms)",
        "flush p99 (ms)",
        "D1 ms per 1,000 records",
        "D1 bytes/record",
        "D1 rows written/record",
      ],
      configs.map((c) => [
        `${c.ledgers} × ${int(c.max_batch)}`,
        `${c.saturated_runs === c.runs ? "" : "≥ "}${spreadOf(c.ceiling, int)}`,
        `${c.saturated_runs}/${c.runs}`,
        c.first_short === undefined ? "none" : int(c.first_short),
        spreadOf(c.batch_mean, int),
        spreadOf(c.latency_p50_ms, (v) => fix(v)),
        spreadOf(c.latency_p99_ms, (v) => fix(v)),
        spreadOf(c.d1_ms_per_1k, (v) => fix(v)),
        spreadOf(c.bytes_per_record, int),
        spreadOf(c.rows_written_per_record, (v) => fix(v, 2)),
      ]),
    ),
  );
  if (best)
    out.push(
      "",
      `Database ceiling: **${int(best.ceiling.median)} records/s** (${best.ledgers} ledgers × batches of up to ${int(best.max_batch)}; range ${int(best.ceiling.min)} – ${int(best.ceiling.max)}).`,
    );
  const folds = configs.filter((c) => Number.isFinite(c.fold_uptime_ms_per_100k.median));
  if (folds.length > 0) {
    const all = (pick: (c: ConfigSummary) => Spread) => spread(folds.map((c) => pick(c).median));
    const uptime = spreadOf(
      all((c) => c.fold_uptime_ms_per_100k),
      int,
    );
    const percentiles = spreadOf(
      all((c) => c.fold_percentiles_ms_per_100k),
      int,
    );
    const rows = spreadOf(
      all((c) => c.fold_rows_read_per_attempt),
      (v) => fix(v, 1),
    );
    const attempts = spreadOf(
      all((c) => c.fold_attempts),
      int,
    );
    out.push(
      "",
      `Health fold (the Cron Trigger's once-a-minute D1 batch over the attempts), run once over each database at its end, every attempt in it recent: ` +
        `D1's time per 100,000 attempts in its uptime statement (whose window is a day) ${uptime} ms, in its percentile statement (30 minutes) ${percentiles} ms ` +
        `and ${rows} rows read per attempt (medians of the layouts, over ${attempts} attempts).`,
    );
  }
  const failed = set.runs.reduce((n, r) => n + r.configs.reduce((m, c) => m + c.steps.reduce((k, x) => k + x.failed_batches, 0), 0), 0);
  if (failed > 0)
    out.push("", `${failed} flushes failed over the set (a transport error or a D1 error) and were sent again, as the ledger's next alarm would.`);
  out.push("", "Per step (offered rate; the runs that reached it):", "");
  out.push(
    table(
      [
        "ledgers × batch",
        "offered/s",
        "achieved/s",
        "kept up",
        "batch mean",
        "batch max",
        "flush p50 (ms)",
        "flush p99 (ms)",
        "behind at end (s)",
        "bytes/record",
        "workerd CPU %",
        "others' CPU %",
      ],
      steps.map((x) => [
        `${x.ledgers} × ${int(x.max_batch)}`,
        int(x.offered),
        spreadOf(x.achieved, int),
        `${x.kept_up_runs}/${x.runs}`,
        spreadOf(x.batch_mean, int),
        spreadOf(x.batch_max, int),
        spreadOf(x.latency_p50_ms, (v) => fix(v)),
        spreadOf(x.latency_p99_ms, (v) => fix(v)),
        spreadOf(x.behind_s, (v) => fix(v, 2)),
        spreadOf(x.bytes_per_record, int),
        spreadOf(x.workerd_cpu_pct, (v) => fix(v, 0)),
        spreadOf(x.foreign_cpu_pct, (v) => fix(v, 0)),
      ]),
    ),
  );
  return out.join("\n");
}
