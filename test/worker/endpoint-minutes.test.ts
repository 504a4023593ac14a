import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { attemptRollupStatements, foldMinutes, type RollupGuard } from "../../src/db/endpoint-minutes";
import { BUCKET_COLUMNS, bucketBounds } from "../../src/db/health-buckets";
import type { CarrierAttempt } from "../../src/db/carrier-attempt";

// The minute rollups endpoint health is folded from (src/db/endpoint-minutes.ts): the writer adds into
// rows in place and counts only what its guard admits; the fold sums minutes per window and reads
// percentiles off the summed histograms.

const MIN = 60_000;
let n = 0;
const uid = () => `${Date.now()}-${n++}-${Math.random().toString(36).slice(2)}`;
/** A minute start an hour back (inside every prune margin), and a moment in it. */
const MINUTE = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;

const attempt = (model: string, over: Partial<CarrierAttempt>): CarrierAttempt => ({
  model,
  provider: "groq",
  providerName: "Groq",
  status: 200,
  at: MINUTE + 1000,
  latencyMs: 100,
  tokensPerSecond: 50,
  ...over,
});
const records = (list: Array<{ id: string; attempts: CarrierAttempt[] }>) => JSON.stringify(list.map((r) => ({ id: r.id, providerResponses: r.attempts })));
const write = (json: string, guard?: RollupGuard) => env.DB.batch(attemptRollupStatements(env.DB, json, guard));

async function countsOf(model: string) {
  return (await env.DB.prepare("SELECT provider, minute, counted, up FROM endpoint_minutes WHERE model = ? ORDER BY provider, minute").bind(model).all())
    .results;
}
/** The histogram rows of a model as {metric: {bound: count}} for one carrier and minute. */
async function bucketsOf(model: string, provider = "groq", minute = MINUTE) {
  const { results } = await env.DB.prepare("SELECT * FROM endpoint_minute_histograms WHERE model = ? AND provider = ? AND minute = ?")
    .bind(model, provider, minute)
    .all<Record<string, string | number>>();
  const out: Record<string, Record<number, number>> = {};
  for (const r of results) {
    const bounds = bucketBounds(r.metric === "throughput" ? "throughput" : "latency");
    const buckets: Record<number, number> = {};
    BUCKET_COLUMNS.forEach((c, i) => {
      if (Number(r[c]) > 0) buckets[bounds[i]!] = Number(r[c]);
    });
    out[String(r.metric)] = buckets;
  }
  return out;
}

describe("the rollup writer", () => {
  it("adds into the endpoint's minute rows in place: one row per minute and metric however many attempts", async () => {
    const model = `test/rollup-${uid()}`;
    const first = [
      {
        id: `g-${uid()}`,
        attempts: [attempt(model, { status: 503, latencyMs: 30, tokensPerSecond: null }), attempt(model, { latencyMs: 100, tokensPerSecond: 50 })],
      },
      { id: `g-${uid()}`, attempts: [attempt(model, { at: MINUTE + 59_999, latencyMs: 105, tokensPerSecond: 52.5 })] },
      { id: `g-${uid()}`, attempts: [attempt(model, { status: 429, latencyMs: 5, tokensPerSecond: null })] }, // counted neither way
      { id: `g-${uid()}`, attempts: [attempt(model, { status: 400, latencyMs: 7, tokensPerSecond: null })] }, // up, not served: no sample
      { id: `g-${uid()}`, attempts: [attempt(model, { at: MINUTE + MIN, latencyMs: 4, tokensPerSecond: 20_000 })] }, // the next minute; clamped to the ends
    ];
    await write(records(first));
    await write(records([{ id: `g-${uid()}`, attempts: [attempt(model, { latencyMs: 100, tokensPerSecond: null })] }]));

    expect(await countsOf(model)).toEqual([
      { provider: "groq", minute: MINUTE, counted: 5, up: 4 },
      { provider: "groq", minute: MINUTE + MIN, counted: 1, up: 1 },
    ]);
    // 100 ms twice (bound 100), 105 ms in (100, 110]; 50 tok/s (bound 50), 52.5 in (50, 55].
    expect(await bucketsOf(model)).toEqual({ latency: { 100: 2, 110: 1 }, throughput: { 50: 1, 55: 1 } });
    expect(await bucketsOf(model, "groq", MINUTE + MIN)).toEqual({ latency: { 10: 1 }, throughput: { 10_000: 1 } });
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM endpoint_minute_histograms WHERE model = ?").bind(model).first("n");
    expect(rows).toBe(4);
  });

  it("counts only the records its guard admits: the guard's parameters follow the records' (?1), from ?2", async () => {
    const model = `test/rollup-guard-${uid()}`;
    const json = records([{ id: `g-${uid()}`, attempts: [attempt(model, {})] }]);
    await write(json, { sql: "?2 = 'yes'", params: ["no"] });
    expect(await countsOf(model)).toEqual([]);
    expect(await bucketsOf(model)).toEqual({});

    // The guard sees each record's id: "not counted before", as a caller's own table of counted ids could say it.
    await env.DB.prepare("CREATE TABLE IF NOT EXISTS test_counted_ids (id TEXT PRIMARY KEY)").run();
    const once: RollupGuard = { sql: "?2 = 'yes' AND rec.id NOT IN (SELECT id FROM test_counted_ids)", params: ["yes"] };
    const remember = env.DB.prepare("INSERT OR IGNORE INTO test_counted_ids SELECT json_extract(value, '$.id') FROM json_each(?1)").bind(json);
    await env.DB.batch([...attemptRollupStatements(env.DB, json, once), remember]);
    await env.DB.batch([...attemptRollupStatements(env.DB, json, once), remember]);
    expect(await countsOf(model)).toEqual([{ provider: "groq", minute: MINUTE, counted: 1, up: 1 }]);
    expect(await bucketsOf(model)).toEqual({ latency: { 100: 1 }, throughput: { 50: 1 } });
  });
});

describe("the fold over minute rollups", () => {
  it("sums the minutes of each window and reads nearest-rank percentiles off the summed histograms as bucket upper bounds", async () => {
    const model = `test/fold-minutes-${uid()}`;
    const NOW = Math.floor(Date.now() / MIN) * MIN + 30_000; // half a minute into the current minute
    const at = (agoMs: number) => NOW - agoMs;
    const list = [
      // 5 minutes back is NOW − 5 min, 30 s into its minute: that minute is in, the one before is not.
      attempt(model, { at: at(5 * MIN + 20_000), latencyMs: 105, tokensPerSecond: 34 }), // same minute as NOW − 5 min
      attempt(model, { at: at(5 * MIN + 40_000), status: 502, latencyMs: 1, tokensPerSecond: null }), // the minute before: 30 min only
      attempt(model, { at: at(10_000), latencyMs: 230, tokensPerSecond: 80 }),
      attempt(model, { at: at(20_000), latencyMs: 1234, tokensPerSecond: null }),
      attempt(model, { at: at(29 * MIN), latencyMs: 98_765, tokensPerSecond: 1.05 }),
      attempt(model, { at: at(31 * MIN), latencyMs: 10, tokensPerSecond: 10 }), // the day only: no percentile sample
      attempt(model, { at: at(23 * 60 * MIN), status: 500, latencyMs: 1, tokensPerSecond: null }),
    ];
    await write(records(list.map((a) => ({ id: `g-${uid()}`, attempts: [a] }))));

    const folded = await foldMinutes(env.DB, [at(5 * MIN), at(30 * MIN), at(24 * 60 * MIN)], at(30 * MIN), 0, 0);
    expect(folded.uptime.filter((r) => r.model === model)).toEqual([{ model, provider: "groq", up: [3, 4, 5], counted: [3, 5, 7] }]);
    // Latency samples (30 min): 105, 230, 1234, 98 765 → buckets 110, 240, 1300, 100 000. n = 4: p50 → k 2 = 240,
    // p75 → k 3 = 1300, p90 and p99 → k 4 = 100 000. Throughput: 34, 80, 1.05 → 36, 80, 1.1; n = 3: p50 → k 2 = 36, then 80.
    expect(folded.percentiles.filter((r) => r.model === model)).toEqual([
      { model, provider: "groq", metric: "latency", values: [240, 1300, 100_000, 100_000] },
      { model, provider: "groq", metric: "throughput", values: [36, 80, 80, 80] },
    ]);
  });

  it("prunes count minutes before its first cut and histogram minutes before its second, nothing after", async () => {
    const model = `test/fold-prune-${uid()}`;
    // Three days back: older than anything other tests keep, so their rows are not cut.
    const base = MINUTE - 3 * 24 * 60 * MIN;
    await write(records([base, base + MIN, base + 2 * MIN].map((t) => ({ id: `g-${uid()}`, attempts: [attempt(model, { at: t + 1000 })] }))));
    await foldMinutes(env.DB, [MINUTE], MINUTE, base + 2 * MIN, base + MIN);
    expect((await countsOf(model)).map((r) => r.minute)).toEqual([base + 2 * MIN]);
    const left = await env.DB.prepare("SELECT DISTINCT minute FROM endpoint_minute_histograms WHERE model = ? ORDER BY minute")
      .bind(model)
      .all<{ minute: number }>();
    expect(left.results.map((r) => r.minute)).toEqual([base + MIN, base + 2 * MIN]);
  });
});
