import { describe, expect, it } from "vitest";
import {
  DEFAULT_RATES,
  accountOf,
  ceilingMarkdown,
  ceilingOf,
  ladder,
  nextRate,
  parseList,
  readyAt,
  readyBy,
  stepFigures,
  summarize,
  zipfTable,
  type CeilingSet,
  type ConfigRun,
  type Step,
  type Stored,
} from "../../bench/ceiling-model.ts";

// The records-store ceiling bench's arithmetic (bench/ceiling-model.ts): the queue's deliveries as the
// bench plays them, the rate a step achieved, and the report.

const stored = (startMs: number, endMs: number, n: number, extra: Partial<Stored> = {}): Stored => ({
  consumer: 0,
  startMs,
  endMs,
  n,
  ok: true,
  parts: 1,
  rollups: 3,
  ms: endMs - startMs,
  d1Ms: 2,
  rowsWritten: 6 * n,
  r2Ms: 4,
  ...extra,
});

const step = (offered: number, achieved: number): Step => ({
  offered,
  achieved,
  parts_per_s: achieved / 10,
  rollups_per_s: achieved / 5,
  kept_up: achieved >= 0.9 * offered,
  batches: 10,
  latency_p50_ms: 5,
  latency_p99_ms: 9,
  store_p50_ms: 4,
  d1_ms_per_batch: 2,
  r2_ms_per_batch: 3,
  rows_written_per_record: 6,
  behind_s: 0,
  failed_batches: 0,
  foreign_cpu_pct: 1,
  workerd_cpu_pct: 50,
});

const config = (batch: number, consumers: number, steps: Step[]): ConfigRun => ({
  batch,
  consumers,
  steps,
  bytes_start: 100_000,
  bytes_end: 200_000,
  records_end: 10_000,
  parts_end: 1000,
  rollups_end: 3000,
  attempts_end: 10_000,
});

describe("the queue's deliveries", () => {
  it("makes a batch ready every batch/rate seconds, the first at once", () => {
    expect(readyBy(100, 10, 1000, 999)).toBe(0);
    expect(readyBy(100, 10, 1000, 1000)).toBe(1);
    expect(readyBy(100, 10, 1000, 1099)).toBe(1);
    expect(readyBy(100, 10, 1000, 1100)).toBe(2);
    expect(readyAt(100, 10, 1000, 3)).toBe(1300);
    expect(readyBy(100, 10, 1000, readyAt(100, 10, 1000, 3))).toBe(4);
  });

  it("starts each layout's ladder where it offers at least 20 batches a second", () => {
    expect(ladder(DEFAULT_RATES, 1)[0]).toBe(50);
    expect(ladder(DEFAULT_RATES, 10)[0]).toBe(200);
    expect(ladder(DEFAULT_RATES, 100)[0]).toBe(2000);
    expect(ladder([100, 200], 100)).toEqual([200]);
  });

  it("draws accounts by a Zipf law, the same every time: the busiest account most often, every account within range", () => {
    const zipf = zipfTable(100);
    const counts = new Array<number>(100).fill(0);
    for (let k = 0; k < 20_000; k++) counts[accountOf(k, zipf)]!++;
    expect(accountOf(7, zipf)).toBe(accountOf(7, zipf));
    expect(counts[0]).toBe(Math.max(...counts));
    // Weight 1/1 of Σ 1/r (≈ 5.19 for 100 accounts): ≈ 19 % to the first.
    expect(counts[0]! / 20_000).toBeGreaterThan(0.15);
    expect(counts[0]! / 20_000).toBeLessThan(0.23);
    expect(counts.filter((c) => c > 0).length).toBeGreaterThan(90);
  });
});

describe("a step's figures", () => {
  it("counts the records, parts and rollup rows stored within the window, per second", () => {
    const batches = [stored(0, 500, 10), stored(1000, 1500, 10), stored(1500, 2900, 10), stored(2900, 3100, 10), stored(1600, 1700, 10, { ok: false })];
    const f = stepFigures(batches, { offered: 20, batch: 10, w0: 1000, w1: 3000, readyByEnd: 6 });
    expect(f.batches).toBe(2);
    expect(f.achieved).toBe(10);
    expect(f.parts_per_s).toBe(1);
    expect(f.rollups_per_s).toBe(3);
    expect(f.kept_up).toBe(false);
    expect(f.rows_written_per_record).toBe(6);
    // 6 ready, 3 stored by the end: 30 records behind, 1.5 s of the offered rate.
    expect(f.behind_s).toBe(1.5);
    expect(f.failed_batches).toBe(1);
  });

  it("steps up while a step keeps up, and stops after the first that does not", () => {
    expect(nextRate([50, 100, 200], step(50, 50))).toBe(100);
    expect(nextRate([50, 100, 200], step(100, 80))).toBeUndefined();
    expect(nextRate([50, 100, 200], step(200, 200))).toBeUndefined();
  });

  it("takes as a layout's ceiling the most a step sustained, never more than it offered", () => {
    const c = ceilingOf(config(10, 1, [step(100, 104), step(200, 190), step(500, 240)]));
    expect(c).toMatchObject({ records_per_s: 240, saturated: true });
    expect(ceilingOf(config(10, 1, [step(100, 130)]))).toMatchObject({ records_per_s: 100, saturated: false });
  });
});

describe("the report", () => {
  it("summarizes each layout over the runs (median and range) and prints its tables", () => {
    const set: CeilingSet = {
      format: "switchyard-bench-records-ceiling/1",
      started_at: "2026-11-27T00:00:00Z",
      args: [],
      source: "commit abc",
      machine: { cpu: "cpu", cores: 2, node: "v20", workerd: "w" },
      settings: { rates: [100, 200, 500], batches: [10], consumers: [1], accounts: 1000, warmup_ms: 1000, window_ms: 4000 },
      record: { bytes_mean: 976, bytes_max: 990 },
      runs: [200, 240, 300].map((top, i) => ({
        index: i + 1,
        started_at: "2026-11-27T00:00:00Z",
        configs: [config(10, 1, [step(100, 100), step(200, 200), step(500, top)])],
        foreign_cpu_pct: 2,
        wall_s: 30,
      })),
    };
    const [s] = summarize(set);
    expect(s).toMatchObject({ batch: 10, consumers: 1, runs: 3, saturated_runs: 3, first_short: 500 });
    expect(s!.ceiling).toEqual({ median: 240, min: 200, max: 300 });
    expect(s!.batches_per_s.median).toBe(24);
    expect(s!.d1_bytes_per_batch.median).toBe(100);
    const md = ceilingMarkdown(set);
    expect(md).toContain("| 10 × 1 | 240 (200 – 300) | 3/3 | 24 (20 – 30) |");
    expect(md).toContain("Per step (every run)");
  });

  it("reads its lists from the command line", () => {
    expect(parseList(undefined, [1, 4], "--x")).toEqual([1, 4]);
    expect(parseList("1, 10,100", [], "--x")).toEqual([1, 10, 100]);
    expect(() => parseList("1,0", [], "--x")).toThrow(/whole numbers/);
  });
});
