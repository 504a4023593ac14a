import { and, count, gte, inArray, isNotNull, ne, sql } from "drizzle-orm";
import { db, type Db } from "./client";
import { generations } from "./schema";

/**
 * Uptime as the contract defines it: successful / (successful + error) × 100, where an error is a
 * 5xx and rate-limited (429) requests are left out of both. A 4xx other than 429 is the caller's
 * doing, not the carrier's, so it counts as up.
 */
function uptimeQuery(d: Db, modelIds: readonly string[], sinceMs: number) {
  return d
    .select({
      provider: generations.providerName,
      up: sql<number>`sum(case when ${generations.status} < 500 then 1 else 0 end)`.mapWith(Number),
      total: count(),
    })
    .from(generations)
    .where(
      and(
        inArray(generations.model, [...modelIds]),
        gte(generations.createdAt, sinceMs),
        isNotNull(generations.providerName),
        ne(generations.status, 429),
      ),
    )
    .groupBy(generations.providerName);
}

type UptimeRow = { provider: string | null; up: number; total: number };

function toPercentages(rows: UptimeRow[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (r.provider !== null && r.total > 0) out.set(r.provider, (r.up / r.total) * 100);
  return out;
}

const ids = (modelId: string | readonly string[]): readonly string[] => (typeof modelId === "string" ? [modelId] : modelId);

/**
 * Percent uptime (0..100) per carrier display name for requests of `modelId` (or any of several
 * ids, e.g. a model and the alias it is reached by) since `sinceMs` (Unix ms). A carrier with no
 * counted records in the window is absent: unknown, not 100.
 */
export async function endpointUptime(d1: D1Database, modelId: string | readonly string[], sinceMs: number): Promise<Map<string, number>> {
  if (ids(modelId).length === 0) return new Map();
  return toPercentages(await uptimeQuery(db(d1), ids(modelId), sinceMs));
}

/** `endpointUptime` for several windows in one D1 round trip; results follow `sinceMs` order. */
export async function endpointUptimes(d1: D1Database, modelId: string | readonly string[], sinceMs: readonly number[]): Promise<Map<string, number>[]> {
  const [first, ...rest] = sinceMs;
  if (first === undefined || ids(modelId).length === 0) return sinceMs.map(() => new Map());
  const d = db(d1);
  const results = await d.batch([uptimeQuery(d, ids(modelId), first), ...rest.map((s) => uptimeQuery(d, ids(modelId), s))]);
  return results.map(toPercentages);
}
