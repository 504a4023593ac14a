/**
 * The `endpoint_attempts` table (src/db/schema.ts): filled from flushed generation records
 * (src/db/generations.ts), folded and pruned by the Cron Trigger (src/health/health-snapshot.ts).
 */
import { CARRIER_FAULT_SQL } from "./carrier-attempt";

/** An attempt is up unless the carrier failed (`isCarrierFault`: 5xx, 502 unreachable, 504 timeout, its own 401/402/403/404…); 429 counts neither way. */
const COUNTED = "status <> 429";
const UP = `NOT ${CARRIER_FAULT_SQL}`;
/** Served: only these have a time to first token (and maybe a throughput). */
const SERVED = "status BETWEEN 200 AND 299";
export const PERCENTILES = [50, 75, 90, 99] as const;

export type UptimeRow = { model: string; provider: string; up: number[]; counted: number[] };
export type PercentileRow = { model: string; provider: string; metric: "latency" | "throughput"; values: number[] };

/**
 * One D1 batch (one round trip, one transaction): uptime counts per window, latency and throughput
 * percentiles since `percentilesSince`, and the deletion of rows older than `pruneBefore`.
 * Percentiles are nearest-rank: the k-th smallest of n with k = ceil(p·n/100), i.e. (p·n + 99) / 100 in
 * integer arithmetic (no math functions needed).
 */
export async function foldAttempts(
  d1: D1Database,
  windowsSince: readonly number[],
  percentilesSince: number,
  pruneBefore: number,
): Promise<{ uptime: UptimeRow[]; percentiles: PercentileRow[] }> {
  const oldest = Math.min(...windowsSince);
  const sums = windowsSince.map((since, i) => `sum(at >= ${since} AND ${UP}) AS up${i}, sum(at >= ${since}) AS n${i}`).join(", ");
  const picks = PERCENTILES.map((p) => `max(CASE WHEN rn = (${p} * n + 99) / 100 THEN v END) AS p${p}`).join(", ");
  const [uptime, percentiles] = await d1.batch<Record<string, string | number | null>>([
    d1.prepare(`SELECT model, provider, ${sums} FROM endpoint_attempts WHERE at >= ?1 AND ${COUNTED} GROUP BY model, provider`).bind(oldest),
    d1
      .prepare(
        `WITH samples AS (
           SELECT model, provider, 'latency' AS metric, latency_ms AS v FROM endpoint_attempts WHERE at >= ?1 AND ${SERVED}
           UNION ALL
           SELECT model, provider, 'throughput', tokens_per_second FROM endpoint_attempts WHERE at >= ?1 AND ${SERVED} AND tokens_per_second IS NOT NULL
         ), ranked AS (
           SELECT model, provider, metric, v,
             row_number() OVER (PARTITION BY model, provider, metric ORDER BY v) AS rn,
             count(*) OVER (PARTITION BY model, provider, metric) AS n
           FROM samples
         )
         SELECT model, provider, metric, ${picks} FROM ranked GROUP BY model, provider, metric`,
      )
      .bind(percentilesSince),
    d1.prepare("DELETE FROM endpoint_attempts WHERE at < ?1").bind(pruneBefore),
  ]);
  return {
    uptime: (uptime?.results ?? []).map((r) => ({
      model: String(r.model),
      provider: String(r.provider),
      up: windowsSince.map((_, i) => Number(r[`up${i}`] ?? 0)),
      counted: windowsSince.map((_, i) => Number(r[`n${i}`] ?? 0)),
    })),
    percentiles: (percentiles?.results ?? []).map((r) => ({
      model: String(r.model),
      provider: String(r.provider),
      metric: r.metric === "throughput" ? "throughput" : "latency",
      values: PERCENTILES.map((p) => Number(r[`p${p}`])),
    })),
  };
}

/**
 * Statements that copy the attempts of a chunk of records (the same JSON array `flushGenerations`
 * binds) into the table: the records' earlier rows are deleted first, so a retried flush leaves the
 * same rows and a record that replaces another (a late settle after the "abandoned" one) replaces its
 * attempts too. `providerResponses` may be stored as JSON text or as an array; a record without it, or
 * with invalid JSON, or an attempt missing a required field, adds nothing rather than failing the flush.
 */
const ATTEMPTS = `(SELECT json_extract(r.value, '$.id') AS generation_id, CAST(a.key AS INTEGER) AS idx,
    json_extract(a.value, '$.model') AS model, json_extract(a.value, '$.provider') AS provider, json_extract(a.value, '$.at') AS at,
    json_extract(a.value, '$.status') AS status, json_extract(a.value, '$.latencyMs') AS latency_ms, json_extract(a.value, '$.tokensPerSecond') AS tokens_per_second
  FROM json_each(?1) AS r,
    json_each(CASE WHEN json_valid(json_extract(r.value, '$.providerResponses')) THEN json_extract(r.value, '$.providerResponses') ELSE '[]' END) AS a)`;
export const DELETE_ATTEMPTS_SQL = "DELETE FROM endpoint_attempts WHERE generation_id IN (SELECT json_extract(value, '$.id') FROM json_each(?1))";
export const INSERT_ATTEMPTS_SQL =
  `INSERT INTO endpoint_attempts (generation_id, idx, model, provider, at, status, latency_ms, tokens_per_second) ` +
  `SELECT * FROM ${ATTEMPTS} WHERE generation_id IS NOT NULL AND model IS NOT NULL AND provider IS NOT NULL AND at IS NOT NULL AND status IS NOT NULL AND latency_ms IS NOT NULL ` +
  `ON CONFLICT (generation_id, idx) DO NOTHING`;
