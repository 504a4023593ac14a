import { describe, expect, it } from "vitest";
import {
  DEFAULT_RATES,
  arrivedBy,
  ceilingMarkdown,
  ceilingOf,
  databaseCeiling,
  ledgerRate,
  nextFlushAt,
  nextRate,
  outbox,
  parseList,
  stepFigures,
  summarize,
  summarizeSteps,
  takeBatch,
  type Batch,
  type CeilingSet,
  type ConfigRun,
  type Step,
} from "../../bench/ceiling-model.ts";

// The write-ceiling bench's arithmetic (bench/ceiling-model.ts): the ledger's alarm as the bench plays it,
// the rate a step achieved, and the report.

/** Plays one ledger in virtual time against a D1 whose batch takes `latency(n)` ms; returns its batches. */
function play(ratePerS: number, delayMs: number, maxBatch: number, untilMs: number, latency: (n: number) => number): Batch[] {
  const box = outbox(ratePerS, 0, delayMs, maxBatch);
  const out: Batch[] = [];
  let now = 0;
  let afterFlush = false;
  for (let guard = 0; guard < 100_000; guard++) {
    const at = nextFlushAt(box, now, afterFlush);
    if (at >= untilMs) break;
    now = at;
    const n = takeBatch(box, now);
    if (n === 0) {
      afterFlush = false;
      continue;
    }
    const end = now + latency(n);
    out.push({ ledger: 0, startMs: now, endMs: end, n, ok: true, d1Ms: latency(n), rowsWritten: n * 8 });
    now = end;
    afterFlush = true;
  }
  return out;
}

const step = (offered: number, achieved: number, extra: Partial<Step> = {}): Step => ({
  offered,
  achieved,
  kept_up: achieved >= 0.9 * offered,
  batches: 10,
  records: 1000,
  batch_mean: 100,
  batch_p50: 100,
  batch_max: 100,
  full_pct: 0,
  latency_p50_ms: 5,
  latency_p99_ms: 9,
  d1_ms_p50: 4,
  d1_ms_per_1k: 70,
  rows_written_per_record: 8.5,
  behind_records: 0,
  behind_s: 0,
  failed_batches: 0,
  bytes_per_record: 930,
  foreign_cpu_pct: 1,
  workerd_cpu_pct: 50,
  ...extra,
});

const config = (ledgers: number, maxBatch: number, steps: Step[]): ConfigRun => ({
  ledgers,
  max_batch: maxBatch,
  steps,
  bytes_start: 100_000,
  bytes_end: 100_000 + 930 * 50_000,
  records_end: 50_000,
  attempts_end: 55_000,
  fold: {
    attempts: 50_000,
    statements: [
      { d1_ms: 400, rows_read: 200_000 },
      { d1_ms: 100, rows_read: 300_000 },
      { d1_ms: 0, rows_read: 0 },
    ],
  },
});

describe("bench ceiling: the ledger's outbox and alarm", () => {
  it("the first record into an empty outbox sets the alarm the delay later; the alarm takes what arrived, at most a batch", () => {
    const box = outbox(100, 0, 1000, 500); // a record every 10 ms
    expect(arrivedBy(box, 0)).toBe(0);
    expect(arrivedBy(box, 10)).toBe(1);
    expect(nextFlushAt(box, 0, false)).toBe(1010);
    expect(takeBatch(box, 1010)).toBe(101);
    // Nothing arrived during the flush: the next record (the 102nd, at 1020 ms) sets the next alarm.
    expect(nextFlushAt(box, 1015, true)).toBe(2020);
    // Records arrived during the flush: the alarm fires again at once.
    expect(nextFlushAt(box, 1030, true)).toBe(1030);
    const full = outbox(10_000, 0, 1000, 500);
    expect(takeBatch(full, 1000)).toBe(500);
    expect(nextFlushAt(full, 1001, true)).toBe(1001);
  });

  it("batches grow with the rate and the D1 latency until they are full", () => {
    const latency = (n: number) => 2 + n * 0.05; // 2 ms a batch + 50 µs a record
    const slow = play(50, 1000, 500, 10_000, latency);
    // 50 records a second, flushed once a second (the delay), a few stragglers at once after a flush.
    expect(Math.max(...slow.map((b) => b.n))).toBeLessThanOrEqual(52);
    expect(slow.filter((b) => b.n > 5).length).toBeGreaterThanOrEqual(8);
    // 10,000 records a second: once the second the first alarm waited for is caught up (full batches
    // until ≈ 2.1 s), flushing without pause, each batch what came during the last one: b = 10 · (2 + 0.05 b), 40.
    const busy = play(10_000, 1000, 500, 10_000, latency);
    expect(busy.filter((b) => b.startMs < 2000 && b.n === 500).length).toBeGreaterThan(10);
    const late = busy.filter((b) => b.startMs > 3000);
    expect(Math.max(...late.map((b) => b.n))).toBeLessThanOrEqual(41);
    expect(ledgerRate(busy, 3000, 10_000, 500)).toBeCloseTo(10_000, -2);
    // Beyond 1 / 50 µs = 20,000 records a second it cannot keep up: full batches, 500 per 27 ms.
    const over = play(40_000, 1000, 500, 10_000, latency);
    expect(over.filter((b) => b.startMs > 2000).every((b) => b.n === 500)).toBe(true);
    expect(ledgerRate(over, 2000, 10_000, 500)).toBeCloseTo(500 / 0.027, -2);
  });

  it("a ledger's rate is taken over whole periods, not cut by the window's edges", () => {
    // 100 records every second, completing at 0.5 s, 1.5 s, …: a 3.2 s window holds 3 or 4 of them.
    const batches = Array.from({ length: 10 }, (_, i) => ({ startMs: 490 + i * 1000, endMs: 500 + i * 1000, n: 100, ok: true }));
    expect(ledgerRate(batches, 400, 3600, 500)).toBeCloseTo(100, 6);
    expect(ledgerRate(batches, 0, 3200, 500)).toBeCloseTo(100, 6);
    // Bursts: 250 records a second as the alarm's 100, then at once 100 and 50 (batches of at most 100).
    // From the first completion to the last would count 900 records over 3.02 s (298/s); from burst end to burst end, 250/s.
    const bursts = Array.from({ length: 10 }, (_, i) =>
      [100, 100, 50].map((n, j) => ({ startMs: 1000 * i + 10 * j, endMs: 1000 * i + 10 * j + 10, n, ok: true })),
    ).flat();
    expect(ledgerRate(bursts, 995, 4035, 500)).toBeCloseTo(250, 6);
    expect(ledgerRate(bursts, 1005, 4500, 500)).toBeCloseTo(250, 6);
    // One completion only: its records over the window.
    expect(ledgerRate([{ startMs: 490, endMs: 500, n: 300, ok: true }], 0, 3000, 500)).toBeCloseTo(100, 6);
    expect(ledgerRate([{ startMs: 490, endMs: 500, n: 300, ok: false }], 0, 3000, 500)).toBe(0);
  });

  it("a step's figures: achieved over all ledgers, batch sizes, flush latency, rows per record, what is left behind", () => {
    const batches: Batch[] = [0, 1].flatMap((ledger) =>
      Array.from({ length: 6 }, (_, i) => ({ ledger, startMs: 1000 + i * 1000 - 10, endMs: 1000 + i * 1000, n: 500, ok: true, d1Ms: 8, rowsWritten: 4200 })),
    );
    const f = stepFigures(batches, { offered: 1000, ledgers: 2, maxBatch: 500, w0: 1500, w1: 5500, arrivedByEnd: 5500, delayMs: 1000 });
    expect(f.achieved).toBeCloseTo(1000, 6);
    expect(f.kept_up).toBe(true);
    expect(f.batches).toBe(8);
    expect(f.records).toBe(4000);
    expect(f.full_pct).toBe(100);
    expect(f.latency_p50_ms).toBeCloseTo(10, 6);
    expect(f.rows_written_per_record).toBeCloseTo(8.4, 6);
    expect(f.d1_ms_per_1k).toBeCloseTo(16, 6); // 8 ms of D1 per 500 records
    expect(f.behind_records).toBe(500); // 5,000 done by 5.5 s
    expect(f.behind_s).toBeCloseTo(0.5, 6);
    expect(stepFigures(batches, { offered: 5000, ledgers: 2, maxBatch: 500, w0: 1500, w1: 5500, arrivedByEnd: 27_500, delayMs: 1000 }).kept_up).toBe(false);
  });

  it("the rates step up while they are kept up, and stop at the first one that is not or at the ladder's end", () => {
    expect(nextRate(DEFAULT_RATES, { offered: 1000, kept_up: true })).toBe(2000);
    expect(nextRate(DEFAULT_RATES, { offered: 5000, kept_up: false })).toBeUndefined();
    expect(nextRate(DEFAULT_RATES, { offered: DEFAULT_RATES.at(-1)!, kept_up: true })).toBeUndefined();
  });

  it("flag values: comma-separated whole numbers, or the default", () => {
    expect(parseList(undefined, [1, 4], "--x")).toEqual([1, 4]);
    expect(parseList("1, 16", [], "--x")).toEqual([1, 16]);
    expect(() => parseList("1,0", [], "--x")).toThrow(/whole numbers/);
    expect(() => parseList("a", [], "--x")).toThrow(/whole numbers/);
  });
});

describe("bench ceiling: the ceiling and the report", () => {
  it("the ceiling is the most sustained: achieved, never above offered; above the last rate when no step fell short", () => {
    const c = config(16, 500, [step(5000, 4990), step(10_000, 13_500), step(20_000, 12_100)]);
    expect(ceilingOf(c)).toMatchObject({ records_per_s: 12_100, saturated: true });
    const open = config(1, 100, [step(1000, 1000), step(2000, 2100)]);
    expect(ceilingOf(open)).toMatchObject({ records_per_s: 2000, saturated: false });
  });

  it("medians and ranges over runs, per layout and per step; the database's ceiling is its best layout's", () => {
    const set: CeilingSet = {
      format: "switchyard-bench-ceiling/1",
      started_at: "2026-01-01T00:00:00.000Z",
      args: [],
      source: "commit abc1234",
      machine: { cpu: "test cpu", cores: 2, node: "v20", workerd: "1" },
      settings: { rates: DEFAULT_RATES, ledgers: [1, 16], batches: [500], warmup_ms: 1500, window_ms: 4000, flush_delay_ms: 1000 },
      record: { bytes_mean: 1020, bytes_p50: 1010, bytes_max: 1290, attempts_mean: 1.2, d1_bytes_flushed: 930, d1_bytes_kept: 640 },
      runs: [7000, 8000, 6000].map((top, i) => ({
        index: i + 1,
        started_at: "",
        foreign_cpu_pct: 2,
        wall_s: 60,
        configs: [config(1, 500, [step(5000, 5000), step(10_000, top)]), config(16, 500, [step(10_000, 10_000), step(20_000, top + 4000)])],
      })),
    };
    const configs = summarize(set);
    expect(configs.map((c) => [c.ledgers, c.ceiling.median, c.ceiling.min, c.ceiling.max, c.saturated_runs])).toEqual([
      [1, 7000, 6000, 8000, 3],
      [16, 11_000, 10_000, 12_000, 3],
    ]);
    expect(configs[0]!.first_short).toBe(10_000);
    expect(configs[0]!.bytes_per_record.median).toBeCloseTo(930, 6);
    expect(databaseCeiling(configs)?.ledgers).toBe(16);
    const steps = summarizeSteps(set);
    expect(steps.map((s) => [s.ledgers, s.offered, s.runs, s.kept_up_runs])).toEqual([
      [1, 5000, 3, 3],
      [1, 10_000, 3, 0],
      [16, 10_000, 3, 3],
      [16, 20_000, 3, 0],
    ]);
    const md = ceilingMarkdown(set);
    expect(md).toContain("| 16 × 500 | 11,000 (10,000 – 12,000) | 3/3 | 20,000 |");
    expect(md).toContain("Database ceiling: **11,000 records/s**");
    expect(md).toContain(
      "in its uptime statement (whose window is a day) 800 ms, in its percentile statement (30 minutes) 200 ms and 10.0 rows read per attempt",
    );
    expect(md).toContain("in D1 930 B a record as flushed (its attempts' rows included), 640 B once the attempts are pruned");
    expect(md).toContain("| 1 × 500 | 10,000 | 7,000 (6,000 – 8,000) | 0/3 |");
    // A layout that never fell short: its ceiling is a lower bound.
    const open = ceilingMarkdown({ ...set, runs: [{ ...set.runs[0]!, configs: [config(1, 100, [step(1000, 1000)])] }] });
    expect(open).toContain("| 1 × 100 | ≥ 1,000 | 0/1 | none |");
  });
});
