/**
 * Endpoint health's minute rollups (src/db/schema.ts `endpoint_minutes`, `endpoint_minute_histograms`):
 * written from records' carrier attempts (`attemptRollupStatements`, in the batch that writes the records),
 * folded and pruned once a minute by the Cron Trigger (`foldMinutes`, src/health/health-snapshot.ts).
 * Both tables are updated in place, so what the fold reads is bounded by endpoints × minutes, whatever
 * the traffic.
 */
import { CARRIER_FAULT_SQL } from "./carrier-attempt";
import { BUCKET_COLUMNS, METRICS, PERCENTILES, bucketOfSql, histogramPercentiles, type Metric } from "./health-buckets";

export { PERCENTILES };

/** An attempt is up unless the carrier failed (`isCarrierFault`: 5xx, 502 unreachable, 504 timeout, its own 401/402/403/404…); 429 counts neither way. */
const COUNTED = "status <> 429";
const UP = `NOT ${CARRIER_FAULT_SQL}`;
/** Served: only these have a time to first token (and maybe a throughput). */
const SERVED = "status BETWEEN 200 AND 299";
const MINUTE_MS = 60_000;

/**
 * A condition on each record, ANDed into the rollup statements: only records for which it holds are
 * counted. In scope: `rec.id` (the record's id) and `rec.responses` (its `providerResponses` as the
 * generations row stores it). Its parameters are bound after the records', so number them from ?2
 * (the records' JSON is ?1); D1 allows 100 bound parameters per statement.
 */
export type RollupGuard = { sql: string; params: unknown[] };

/**
 * The attempts of the records in `recordsJson` (a JSON array of records as `flushGenerations` binds them:
 * `id`, and `providerResponses` as JSON text or an array of CarrierAttempt), one row per attempt. A record
 * without an id or attempts, or with invalid JSON, and an attempt missing a field, add nothing (as before).
 */
function attemptsCte(guard: RollupGuard | undefined): string {
  return `WITH rec AS (
      SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.providerResponses') AS responses FROM json_each(?1)
    ), attempt AS (
      SELECT json_extract(a.value, '$.model') AS model, json_extract(a.value, '$.provider') AS provider, json_extract(a.value, '$.at') AS at,
        json_extract(a.value, '$.status') AS status, json_extract(a.value, '$.latencyMs') AS latency_ms, json_extract(a.value, '$.tokensPerSecond') AS tokens_per_second
      FROM rec, json_each(CASE WHEN json_valid(rec.responses) THEN rec.responses ELSE '[]' END) AS a
      WHERE rec.id IS NOT NULL${guard ? ` AND (${guard.sql})` : ""}
    ), valid AS (
      SELECT model, provider, CAST(at AS INTEGER) - CAST(at AS INTEGER) % ${MINUTE_MS} AS minute, status, latency_ms, tokens_per_second FROM attempt
      WHERE model IS NOT NULL AND provider IS NOT NULL AND at IS NOT NULL AND status IS NOT NULL AND latency_ms IS NOT NULL
    )`;
}

const MINUTES_SQL = (guard: RollupGuard | undefined) =>
  `${attemptsCte(guard)}
  INSERT INTO endpoint_minutes (model, provider, minute, counted, up)
  SELECT model, provider, minute, count(*), sum(${UP}) FROM valid WHERE ${COUNTED} GROUP BY model, provider, minute
  ON CONFLICT (model, provider, minute) DO UPDATE SET counted = counted + excluded.counted, up = up + excluded.up`;

const sampleOf: Record<Metric, string> = { latency: "latency_ms", throughput: "tokens_per_second" };
const HISTOGRAMS_SQL = (guard: RollupGuard | undefined) =>
  `${attemptsCte(guard)}, sample AS (
    ${METRICS.map(
      (m) =>
        `SELECT model, provider, minute, '${m}' AS metric, ${bucketOfSql(m, sampleOf[m])} AS bucket FROM valid WHERE ${SERVED} AND ${sampleOf[m]} IS NOT NULL`,
    ).join(" UNION ALL ")}
  )
  INSERT INTO endpoint_minute_histograms (model, provider, minute, metric, ${BUCKET_COLUMNS.join(", ")})
  SELECT model, provider, minute, metric, ${BUCKET_COLUMNS.map((_, i) => `sum(bucket = ${i})`).join(", ")} FROM sample WHERE true
  GROUP BY model, provider, minute, metric
  ON CONFLICT (model, provider, minute, metric) DO UPDATE SET ${BUCKET_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}`;

/**
 * Statements that add the carrier attempts of `recordsJson` to the minute rollups (counts and histograms
 * summed into existing rows: upsert-add). They go into the caller's `d1.batch([...])`, so they commit or
 * fail with whatever else it writes. Counting the same records twice must be made impossible by the
 * caller: `guard` says which records count (see RollupGuard; `flushGenerations` passes "not already
 * written with its attempts"). Records in one call are assumed to have distinct ids.
 */
export function attemptRollupStatements(d1: D1Database, recordsJson: string, guard?: RollupGuard): D1PreparedStatement[] {
  const params = [recordsJson, ...(guard?.params ?? [])];
  return [d1.prepare(MINUTES_SQL(guard)).bind(...params), d1.prepare(HISTOGRAMS_SQL(guard)).bind(...params)];
}

export type UptimeRow = { model: string; provider: string; up: number[]; counted: number[] };
export type PercentileRow = { model: string; provider: string; metric: Metric; values: number[] };

/** The first minute a window starting at `since` includes: the one `since` falls in (a window is never short of an attempt inside it). */
const minuteOf = (since: number) => since - (((since % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);

/**
 * One D1 batch (one round trip, one transaction) over the rollups only: uptime counts per window (sums
 * of the minutes from the one each window starts in), latency and throughput percentiles from the
 * histograms summed since `percentilesSince` (nearest rank, reported as the bucket's upper bound:
 * src/db/health-buckets.ts), and the deletion of minutes before `pruneBefore` (counts) and
 * `pruneHistogramsBefore` (histograms). Rows read: endpoints × minutes, at most.
 */
export async function foldMinutes(
  d1: D1Database,
  windowsSince: readonly number[],
  percentilesSince: number,
  pruneBefore: number,
  pruneHistogramsBefore: number,
): Promise<{ uptime: UptimeRow[]; percentiles: PercentileRow[] }> {
  const starts = windowsSince.map(minuteOf);
  const sums = starts.map((m, i) => `sum(CASE WHEN minute >= ${m} THEN up END) AS up${i}, sum(CASE WHEN minute >= ${m} THEN counted END) AS n${i}`).join(", ");
  const [uptime, histograms] = await d1.batch<Record<string, string | number | null>>([
    d1
      .prepare(`SELECT model, provider, ${sums} FROM endpoint_minutes WHERE minute >= ?1 GROUP BY model, provider HAVING sum(counted) > 0`)
      .bind(Math.min(...starts)),
    d1
      .prepare(
        `SELECT model, provider, metric, ${BUCKET_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(", ")} FROM endpoint_minute_histograms WHERE minute >= ?1 GROUP BY model, provider, metric`,
      )
      .bind(minuteOf(percentilesSince)),
    d1.prepare("DELETE FROM endpoint_minutes WHERE minute < ?1").bind(minuteOf(pruneBefore)),
    d1.prepare("DELETE FROM endpoint_minute_histograms WHERE minute < ?1").bind(minuteOf(pruneHistogramsBefore)),
  ]);
  const percentiles: PercentileRow[] = [];
  for (const r of histograms?.results ?? []) {
    const metric: Metric = r.metric === "throughput" ? "throughput" : "latency";
    const values = histogramPercentiles(
      metric,
      BUCKET_COLUMNS.map((c) => Number(r[c] ?? 0)),
    );
    if (values) percentiles.push({ model: String(r.model), provider: String(r.provider), metric, values });
  }
  return {
    uptime: (uptime?.results ?? []).map((r) => ({
      model: String(r.model),
      provider: String(r.provider),
      up: windowsSince.map((_, i) => Number(r[`up${i}`] ?? 0)),
      counted: windowsSince.map((_, i) => Number(r[`n${i}`] ?? 0)),
    })),
    percentiles,
  };
}
