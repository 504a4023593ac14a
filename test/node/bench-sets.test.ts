import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { setFigures, setFileName, setJson, summarizeSet, type RawSet, type SetSummary } from "../../bench/set-summary.ts";
import type { Results } from "../../bench/report.ts";

// The bench's results as kept in git (bench/set-summary.ts): one small summary per set in bench/sets/, the
// figures of a set's runs as medians and ranges; the raw runs stay in the git-ignored bench/out/.

const root = fileURLToPath(new URL("../..", import.meta.url));
const setsDir = join(root, "bench", "sets");

/** A run holding only what the summary reads: the rest of Results is absent in runs of `--only` too. */
const run = (p50: number, requests: number): Results =>
  ({
    generated_at: "2026-11-27T00:00:00.000Z",
    mode: "full",
    non_stream: [
      {
        concurrency: 1,
        router: { concurrency: 1, requests, latency_ms: { p50 }, error_samples: ["kept out"] },
      },
    ],
    stream: [],
    runtime_logs: { router: { lines: 3, recent: ["kept out"] } },
    failures: [],
    targets: [{ name: "concurrency 1: added latency p50", value: p50, goal: 0.5, op: "<=", unit: "ms", met: p50 <= 0.5, detail: "" }],
  }) as unknown as Results;

describe("bench set summaries", () => {
  it("keeps each figure as its median and range over the runs, a setting as one number, rows keyed by what names them", () => {
    const figures = setFigures([run(0.4, 100), run(0.6, 300), run(0.5, 200)]);
    expect(figures).toEqual({
      non_stream: { "concurrency=1": { concurrency: 1, router: { concurrency: 1, requests: [200, 100, 300], latency_ms: { p50: [0.5, 0.4, 0.6] } } } },
    });
    expect(JSON.stringify(figures)).not.toContain("kept out");
  });

  it("summarizes a set with its targets, and names its file for its start", () => {
    const set: RawSet = {
      started_at: "2026-11-27T09:08:07.654Z",
      mode: "full",
      repeat: 2,
      args: ["--only", "2,6,floor"],
      source: "commit abc1234",
      summary: [],
      runs: [run(0.4, 100), run(0.6, 300)],
    };
    const s = summarizeSet(set, 7);
    expect(s).toMatchObject({ format: "switchyard-bench-set/1", set: 7, runs: 2, repeat: 2, source: "commit abc1234" });
    expect(s.figures).toMatchObject({ non_stream: { "concurrency=1": { router: { latency_ms: { p50: [0.5, 0.4, 0.6] } } } } });
    expect(setFileName(s)).toBe("2026-11-27T09-08-07Z.json");
    expect(JSON.parse(setJson(s))).toEqual(JSON.parse(JSON.stringify(s)));
  });

  it("every committed summary reads back, is named for its start, and is small", () => {
    const files = readdirSync(setsDir).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(join(setsDir, file), "utf8");
      const s = JSON.parse(text) as SetSummary;
      expect(s.format, file).toBe("switchyard-bench-set/1");
      expect(setFileName(s), file).toBe(file);
      expect(s.runs, file).toBeGreaterThan(0);
      expect(Array.isArray(s.targets), file).toBe(true);
      expect(setJson(s), file).toBe(text);
      expect(text.length, file).toBeLessThan(200_000);
    }
  });
});
