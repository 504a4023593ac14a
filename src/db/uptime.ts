import { sql } from "drizzle-orm";
import { db } from "./client";
import { generations } from "./schema";

/** Per model and carrier: [up, counted] for each window, in the order the windows were given. */
export type UptimeCounts = { model: string; provider: string; counts: Array<[up: number, counted: number]> };

/**
 * Uptime counts as the contract defines uptime: successful / (successful + error), where an error is a
 * 5xx and rate-limited (429) requests are left out of both; a 4xx other than 429 is the caller's doing,
 * so it counts as up. One statement for every (model, carrier display name) pair and every window: it
 * reads, through the (model, provider_name, created_at) index, only the records of those pairs since
 * the oldest window — bounded by the catalog and the window, not by the table.
 */
export async function uptimeCounts(d1: D1Database, pairs: ReadonlyArray<readonly [model: string, provider: string]>, windowsSinceMs: readonly number[]): Promise<UptimeCounts[]> {
  if (pairs.length === 0 || windowsSinceMs.length === 0) return [];
  const oldest = Math.min(...windowsSinceMs);
  const g = generations;
  const columns = windowsSinceMs.map(
    (since, i) =>
      sql`sum(case when ${g.createdAt} >= ${since} and ${g.status} < 500 then 1 else 0 end) as ${sql.raw(`up${i}`)}, sum(case when ${g.createdAt} >= ${since} then 1 else 0 end) as ${sql.raw(`n${i}`)}`,
  );
  const rows = await db(d1).all<Record<string, string | number>>(sql`
    select ${g.model} as model, ${g.providerName} as provider, ${sql.join(columns, sql`, `)}
    from ${g}
    where (${g.model}, ${g.providerName}) in (select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(${JSON.stringify(pairs)}))
      and ${g.createdAt} >= ${oldest} and ${g.status} <> 429
    group by ${g.model}, ${g.providerName}`);
  return rows.map((r) => ({
    model: String(r.model),
    provider: String(r.provider),
    counts: windowsSinceMs.map((_, i) => [Number(r[`up${i}`]), Number(r[`n${i}`])] as [number, number]),
  }));
}
