// The records-store ceiling scenario's arithmetic, apart from any process (bench/ceiling.ts drives it; the
// node test test/node/bench-ceiling.test.ts checks it): the offered batches of a step, the rate a step
// achieved, whether it kept up, the summary over a set of runs and its markdown.
import { stats } from "./load.ts";
import { spread, type Spread } from "./peer-gateways.ts";

/** Offered rates, records/s over all accounts, stepped up until one is not kept up (each layout starts where it offers ≥ MIN_BATCHES_PER_S). */
export const DEFAULT_RATES = [50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];
/** Records per batch (per queue message) and consumers storing batches at once. */
export const DEFAULT_BATCHES = [1, 10, 100];
export const DEFAULT_CONSUMERS = [1, 4];
/** A step keeps up when it achieves at least this share of what it offered. */
export const KEEP_UP = 0.9;
/** A layout's first step offers at least this many batches a second (fewer would leave too few in a window to measure). */
export const MIN_BATCHES_PER_S = 20;

/** A comma-separated list of whole numbers ≥ 1 (a flag's value), or the default when absent. */
export function parseList(value: string | undefined, fallback: number[], name: string): number[] {
  if (value === undefined) return fallback;
  const list = value.split(",").map((s) => Number(s.trim()));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`${name} takes whole numbers ≥ 1, comma-separated (e.g. 1,4,16), not "${value}"`);
  return list;
}

/** The rates a layout of `batch` records a batch tries: the ladder from the first that offers MIN_BATCHES_PER_S batches a second. */
export function ladder(rates: number[], batch: number): number[] {
  const from = rates.filter((r) => r / batch >= MIN_BATCHES_PER_S);
  return from.length > 0 ? from : rates.slice(-1);
}

/**
 * The queue's deliveries in a step: batch k (0-based) of `batch` records is ready at `startMs + k · batch · 1000 / rate`;
 * batches ready by `nowMs`.
 */
export function readyBy(rate: number, batch: number, startMs: number, nowMs: number): number {
  if (nowMs < startMs) return 0;
  return Math.floor(((nowMs - startMs) * rate) / (batch * 1000) + 1e-9) + 1;
}

/** When batch k (0-based) is ready. */
export function readyAt(rate: number, batch: number, startMs: number, k: number): number {
  return startMs + (k * batch * 1000) / rate;
}

/**
 * The account of the k-th batch: accounts drawn by a Zipf law (weight 1/rank), a few busy ones and a long
 * tail, by a fixed hash of k (the same in every run). `cumulative` is the law's running sum (zipfTable).
 */
export function accountOf(k: number, cumulative: number[]): number {
  let x = Math.imul(k + 1, 0x9e3779b1) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = (x ^ (x >>> 13)) >>> 0;
  const u = (x / 2 ** 32) * cumulative[cumulative.length - 1]!;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export function zipfTable(accounts: number): number[] {
  const out: number[] = [];
  let s = 0;
  for (let r = 1; r <= accounts; r++) out.push((s += 1 / r));
  return out;
}

/** One stored batch as the bench saw it. Times in ms on the bench's monotonic clock. */
export type Stored = {
  consumer: number;
  startMs: number;
  endMs: number;
  n: number;
  ok: boolean;
  parts: number;
  rollups: number;
  /** The Worker's time in storeBatch, D1's own time (Σ meta.duration), rows D1 wrote, and the R2 puts' time. */
  ms: number;
  d1Ms: number;
  rowsWritten: number;
  r2Ms: number;
};

export type StepFigures = {
  offered: number;
  /** Records, parts (R2 objects) and rollup row updates per second completed in the window. */
  achieved: number;
  parts_per_s: number;
  rollups_per_s: number;
  kept_up: boolean;
  batches: number;
  /** A store as the consumer sees it (request → storeBatch done → answer), ms; and storeBatch's own time in the Worker. */
  latency_p50_ms: number;
  latency_p99_ms: number;
  store_p50_ms: number;
  /** Per batch over the window: D1's own time, the R2 puts' time; D1 rows written per record. */
  d1_ms_per_batch: number;
  r2_ms_per_batch: number;
  rows_written_per_record: number;
  /** Batches ready by the end of the window and not yet stored, as seconds of the offered rate. */
  behind_s: number;
  failed_batches: number;
};

/** The figures of one step from its stored batches (all of them; the window [w0, w1] picks its own). */
export function stepFigures(stored: Stored[], o: { offered: number; batch: number; w0: number; w1: number; readyByEnd: number }): StepFigures {
  const inWindow = stored.filter((b) => b.ok && b.endMs >= o.w0 && b.endMs <= o.w1);
  const seconds = (o.w1 - o.w0) / 1000;
  const sum = (pick: (b: Stored) => number) => inWindow.reduce((s, b) => s + pick(b), 0);
  const records = sum((b) => b.n);
  const achieved = records / seconds;
  const latency = stats(inWindow.map((b) => b.endMs - b.startMs));
  const doneByEnd = stored.filter((b) => b.ok && b.endMs <= o.w1).length;
  return {
    offered: o.offered,
    achieved,
    parts_per_s: sum((b) => b.parts) / seconds,
    rollups_per_s: sum((b) => b.rollups) / seconds,
    kept_up: keptUp(achieved, o.offered),
    batches: inWindow.length,
    latency_p50_ms: latency.p50,
    latency_p99_ms: latency.p99,
    store_p50_ms: stats(inWindow.map((b) => b.ms)).p50,
    d1_ms_per_batch: inWindow.length === 0 ? NaN : sum((b) => b.d1Ms) / inWindow.length,
    r2_ms_per_batch: inWindow.length === 0 ? NaN : sum((b) => b.r2Ms) / inWindow.length,
    rows_written_per_record: records === 0 ? NaN : sum((b) => b.rowsWritten) / records,
    behind_s: (Math.max(0, o.readyByEnd - doneByEnd) * o.batch) / o.offered,
    failed_batches: stored.filter((b) => !b.ok).length,
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

export type Step = StepFigures & { foreign_cpu_pct: number; workerd_cpu_pct: number };

/** One layout on a fresh D1 and R2: `consumers` storing batches of `batch` records at once, at rising rates. */
export type ConfigRun = {
  batch: number;
  consumers: number;
  steps: Step[];
  /** D1's size (the meta's size_after) after the migrations and at the end; the records stored, parts and rollup rows then. */
  bytes_start: number;
  bytes_end: number;
  records_end: number;
  parts_end: number;
  rollups_end: number;
  attempts_end: number;
};

/**
 * The most a layout sustained: over its steps, the achieved rate but never more than the offered one.
 * Saturated when some step fell short; otherwise the ceiling lies above the last rate tried.
 */
export function ceilingOf(c: ConfigRun): { records_per_s: number; saturated: boolean; step: Step | undefined } {
  let best: Step | undefined;
  const sustained = (s: Step) => Math.min(s.achieved, s.offered);
  for (const s of c.steps) if (!best || sustained(s) > sustained(best)) best = s;
  return { records_per_s: best ? sustained(best) : NaN, saturated: c.steps.some((s) => !s.kept_up), step: best };
}

export type CeilingRun = { index: number; started_at: string; configs: ConfigRun[]; foreign_cpu_pct: number; wall_s: number };

export type CeilingSet = {
  format: "switchyard-bench-records-ceiling/1";
  started_at: string;
  args: string[];
  source: string;
  machine: { cpu: string; cores: number; node: string; workerd: string };
  settings: { rates: number[]; batches: number[]; consumers: number[]; accounts: number; warmup_ms: number; window_ms: number };
  record: { bytes_mean: number; bytes_max: number };
  /** The ledger's side: SQLite rows its outbox writes per record, by batch size (measured once a set). */
  outbox?: OutboxRows[];
  /** D1 rows written per batch stored (index entries included), with the records' carrier attempts and without. */
  d1_rows?: D1Rows[];
  runs: CeilingRun[];
};

export type D1Rows = { batch: number; attempts: boolean; rows_per_batch: number; rollups_per_batch: number; parts_per_batch: number };

/** Rows written per record by the ledger's outbox: when a settle adds it, when an alarm sends its batch, when the store's acknowledgement removes it. */
export type OutboxRows = {
  n: number;
  batch: number;
  batches: number;
  settle: number;
  send: number;
  stored: number;
  /** At the settle, apart: the debit's own row and index entry (the record rides in it), and the usage updates (sets before records rode in debits have neither). */
  debit?: number;
  usage?: number;
};

const int = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "–");
const fix = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : "–");
function spreadOf(s: Spread, show: (v: number) => string): string {
  if (!Number.isFinite(s.median)) return "–";
  return s.min === s.max ? show(s.median) : `${show(s.median)} (${show(s.min)} – ${show(s.max)})`;
}
const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

/** Per layout (records per batch × consumers) over the runs: its ceiling and what a store looked like there. */
export type ConfigSummary = {
  batch: number;
  consumers: number;
  runs: number;
  saturated_runs: number;
  ceiling: Spread;
  /** At the step that achieved the most. */
  batches_per_s: Spread;
  parts_per_s: Spread;
  rollups_per_s: Spread;
  latency_p50_ms: Spread;
  latency_p99_ms: Spread;
  d1_ms_per_batch: Spread;
  r2_ms_per_batch: Spread;
  rows_written_per_record: Spread;
  /** D1's growth over the layout's database per batch stored (its parts' index rows, rollups and attempts). */
  d1_bytes_per_batch: Spread;
  first_short: number | undefined;
};

export function summarize(set: Pick<CeilingSet, "runs">): ConfigSummary[] {
  const keys: Array<[number, number]> = [];
  for (const r of set.runs) for (const c of r.configs) if (!keys.some(([b, k]) => b === c.batch && k === c.consumers)) keys.push([c.batch, c.consumers]);
  return keys.map(([batch, consumers]) => {
    const configs = set.runs.flatMap((r) => r.configs.filter((c) => c.batch === batch && c.consumers === consumers));
    const ceilings = configs.map(ceilingOf);
    const at = (pick: (s: Step) => number) => spread(ceilings.map((c) => (c.step ? pick(c.step) : NaN)));
    const short = configs.flatMap((c) => c.steps.filter((s) => !s.kept_up).map((s) => s.offered));
    return {
      batch,
      consumers,
      runs: configs.length,
      saturated_runs: ceilings.filter((c) => c.saturated).length,
      ceiling: spread(ceilings.map((c) => c.records_per_s)),
      batches_per_s: spread(ceilings.map((c) => c.records_per_s / batch)),
      parts_per_s: at((s) => (s.parts_per_s * Math.min(s.achieved, s.offered)) / s.achieved),
      rollups_per_s: at((s) => (s.rollups_per_s * Math.min(s.achieved, s.offered)) / s.achieved),
      latency_p50_ms: at((s) => s.latency_p50_ms),
      latency_p99_ms: at((s) => s.latency_p99_ms),
      d1_ms_per_batch: at((s) => s.d1_ms_per_batch),
      r2_ms_per_batch: at((s) => s.r2_ms_per_batch),
      rows_written_per_record: at((s) => s.rows_written_per_record),
      d1_bytes_per_batch: spread(configs.map((c) => (c.records_end > 0 ? ((c.bytes_end - c.bytes_start) * c.batch) / c.records_end : NaN))),
      first_short: short.length > 0 ? Math.min(...short) : undefined,
    };
  });
}

export function ceilingMarkdown(set: CeilingSet): string {
  const runs = set.runs.length;
  const s = set.settings;
  const configs = summarize(set);
  const foreign = spread(set.runs.map((r) => r.foreign_cpu_pct));
  const out: string[] = [];
  out.push(
    `Ceilings of the records store's consumer, \`storeBatch\` on one local D1 and R2 (${runs} run${runs === 1 ? "" : "s"}; medians, ranges in brackets; ${set.source}; ${set.machine.cores} × ${set.machine.cpu}, workerd ${set.machine.workerd}). ` +
      `Synthetic records ${int(set.record.bytes_mean)} B of JSON on average (max ${int(set.record.bytes_max)}) over ${int(s.accounts)} accounts (Zipf). ` +
      `Each step: ${fix(s.warmup_ms / 1000)} s warm-up, ${fix(s.window_ms / 1000)} s measured; a step keeps up at ≥ ${KEEP_UP * 100} % of the offered rate. ` +
      `Other processes took ${spreadOf(foreign, (v) => fix(v, 0))} % of the CPU over a run.`,
  );
  out.push("");
  out.push(
    table(
      [
        "records a batch × consumers",
        "ceiling (records/s)",
        "saturated in",
        "batches/s",
        "parts (R2 objects)/s",
        "rollup row updates/s",
        "store p50 (ms)",
        "store p99 (ms)",
        "D1 ms a batch",
        "R2 put ms a batch",
        "D1 rows written/record",
        "D1 bytes a batch",
      ],
      configs.map((c) => [
        `${int(c.batch)} × ${c.consumers}`,
        `${c.saturated_runs === c.runs ? "" : "≥ "}${spreadOf(c.ceiling, int)}`,
        `${c.saturated_runs}/${c.runs}`,
        spreadOf(c.batches_per_s, int),
        spreadOf(c.parts_per_s, int),
        spreadOf(c.rollups_per_s, int),
        spreadOf(c.latency_p50_ms, (v) => fix(v)),
        spreadOf(c.latency_p99_ms, (v) => fix(v)),
        spreadOf(c.d1_ms_per_batch, (v) => fix(v, 2)),
        spreadOf(c.r2_ms_per_batch, (v) => fix(v, 2)),
        spreadOf(c.rows_written_per_record, (v) => fix(v, 1)),
        spreadOf(c.d1_bytes_per_batch, int),
      ]),
    ),
  );
  if (set.outbox && set.outbox.length > 0)
    out.push(
      "",
      "The ledger's side (its outbox, one SQLite-backed Durable Object per account; SQLite rows written per record, index entries included): " +
        set.outbox
          .map(
            (x) =>
              `batches of ${x.batch}: ${fix(x.settle, 2)} at the settle + ${fix(x.send, 2)} to send + ${fix(x.stored, 2)} at the acknowledgement = ${fix(x.settle + x.send + x.stored, 2)}` +
              (x.debit !== undefined
                ? ` (besides the debit's own row and index entry, ${fix(x.debit, 2)}, which the record rides in, and the usage updates, ${fix(x.usage ?? NaN, 2)})`
                : ""),
          )
          .join("; ") +
        ".",
    );
  if (set.d1_rows && set.d1_rows.length > 0) {
    const sizes = [...new Set(set.d1_rows.map((x) => x.batch))];
    const row = (b: number, attempts: boolean) => set.d1_rows!.find((x) => x.batch === b && x.attempts === attempts);
    out.push(
      "",
      "D1 rows written per batch stored (40 batches each; index entries included), with the records' carrier attempts (`endpoint_attempts` rows) → without: " +
        sizes
          .map((b) => {
            const w = row(b, true);
            const wo = row(b, false);
            return `batches of ${b}: ${fix(w?.rows_per_batch ?? NaN)} → ${fix(wo?.rows_per_batch ?? NaN)} (${fix(wo?.rollups_per_batch ?? NaN)} rollup rows, ${fix(wo?.parts_per_batch ?? NaN, 2)} parts a batch)`;
          })
          .join("; ") +
        ".",
    );
  }
  const failed = set.runs.reduce((n, r) => n + r.configs.reduce((m, c) => m + c.steps.reduce((k, x) => k + x.failed_batches, 0), 0), 0);
  if (failed > 0) out.push("", `${failed} stores failed over the set and were sent again, as the queue would.`);
  out.push("", "Per step (every run):", "");
  out.push(
    table(
      [
        "records a batch × consumers",
        "run",
        "offered/s",
        "achieved/s",
        "kept up",
        "parts/s",
        "rollups/s",
        "store p50 (ms)",
        "behind at end (s)",
        "workerd CPU %",
        "others' CPU %",
      ],
      set.runs.flatMap((r) =>
        r.configs.flatMap((c) =>
          c.steps.map((x) => [
            `${int(c.batch)} × ${c.consumers}`,
            String(r.index),
            int(x.offered),
            int(x.achieved),
            x.kept_up ? "yes" : "no",
            int(x.parts_per_s),
            int(x.rollups_per_s),
            fix(x.latency_p50_ms),
            fix(x.behind_s, 2),
            fix(x.workerd_cpu_pct, 0),
            fix(x.foreign_cpu_pct, 0),
          ]),
        ),
      ),
    ),
  );
  return out.join("\n");
}
