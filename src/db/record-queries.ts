import { and, asc, desc, eq, exists, gt, gte, isNotNull, lt, lte, or, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { db } from "./client";
import { archiveParts, archiveRollups, generations, recordRollups, type ArchivePart, type Generation } from "./schema";
import { DAY_MS, hourlyWhere, recordWhere, rollupWhere, type RecordFilter } from "./record-filter";

/**
 * Reads of an account's records for listings and sums: in D1, and the archive's index and rollups
 * (the archived records themselves are in R2: src/generations/record-pages.ts merges the two).
 */

/** A position in a listing ordered by (created_at, id). */
export type Cursor = { at: number; id: string };
/** Newest first ("older": each page older than the last) or oldest first ("newer"). */
export type Direction = "older" | "newer";

/** Up to `limit` of the account's records in D1 past `bound` in the direction. */
export function d1Records(d1: D1Database, accountId: string, filter: RecordFilter, dir: Direction, bound: Cursor | null, limit: number): Promise<Generation[]> {
  const where = recordWhere(accountId, filter);
  const past = bound
    ? dir === "older"
      ? or(lt(generations.createdAt, bound.at), and(eq(generations.createdAt, bound.at), lt(generations.id, bound.id)))
      : or(gt(generations.createdAt, bound.at), and(eq(generations.createdAt, bound.at), gt(generations.id, bound.id)))
    : undefined;
  const order = dir === "older" ? [desc(generations.createdAt), desc(generations.id)] : [asc(generations.createdAt), asc(generations.id)];
  return db(d1)
    .select()
    .from(generations)
    .where(past ? and(where, past) : where)
    .orderBy(...order)
    .limit(limit)
    .all();
}

/**
 * The account's archived parts that may hold records within the filter past `bound`, in the order a
 * listing in the direction meets them (newest last record first, or oldest first record first); parts
 * whose rollups show no record of the filtered key or model are skipped without reading them.
 */
export function archivedParts(
  d1: D1Database,
  accountId: string,
  filter: RecordFilter,
  dir: Direction,
  bound: Cursor | null,
  limit: number,
): Promise<ArchivePart[]> {
  const parts: SQL[] = [eq(archiveParts.accountId, accountId), eq(archiveParts.state, "archived")];
  if (filter.from) parts.push(gte(archiveParts.day, filter.from));
  if (filter.to) parts.push(lte(archiveParts.day, filter.to));
  if (bound) parts.push(dir === "older" ? lte(archiveParts.firstAt, bound.at) : gte(archiveParts.lastAt, bound.at));
  // The records queue's parts have no per-part rollups (their sums are hourly): they are read to be filtered.
  if (filter.key || filter.model)
    parts.push(
      or(
        isNotNull(archiveParts.batch),
        exists(
          db(d1)
            .select({ one: sql`1` })
            .from(archiveRollups)
            .where(
              and(
                eq(archiveRollups.accountId, archiveParts.accountId),
                eq(archiveRollups.day, archiveParts.day),
                eq(archiveRollups.part, archiveParts.part),
                filter.key ? eq(archiveRollups.keyHash, filter.key) : undefined,
                filter.model ? eq(archiveRollups.model, filter.model) : undefined,
              ),
            ),
        ),
      )!,
    );
  const order =
    dir === "older"
      ? [desc(archiveParts.lastAt), desc(archiveParts.day), desc(archiveParts.part)]
      : [asc(archiveParts.firstAt), asc(archiveParts.day), asc(archiveParts.part)];
  return db(d1)
    .select()
    .from(archiveParts)
    .where(and(...parts))
    .orderBy(...order)
    .limit(limit)
    .all();
}

/** Sums of a group of records: requests, tokens and cost. */
export type Sums = { requests: number; tokensPrompt: number; tokensCompletion: number; tokensCached: number; costNano: number };

/** The sums of a group, over a table's token and cost columns; `requests` counted (records) or summed (rollups). */
function sumsOver(requests: SQL<number>, t: { tokensPrompt: AnyColumn; tokensCompletion: AnyColumn; tokensCached: AnyColumn; costNano: AnyColumn }) {
  const total = (c: AnyColumn) => sql<number>`coalesce(sum(${c}), 0)`.mapWith(Number);
  return {
    requests: requests.mapWith(Number),
    tokensPrompt: total(t.tokensPrompt),
    tokensCompletion: total(t.tokensCompletion),
    tokensCached: total(t.tokensCached),
    costNano: total(t.costNano),
  };
}
const d1Sums = sumsOver(sql<number>`count(*)`, generations);
const rollupSums = sumsOver(sql<number>`coalesce(sum(${archiveRollups.requests}), 0)`, archiveRollups);
const hourlySums = sumsOver(sql<number>`coalesce(sum(${recordRollups.requests}), 0)`, recordRollups);

/** What a breakdown groups by. */
export type GroupBy = "model" | "key" | "carrier";

/**
 * The filtered records summed by model, key hash or carrier name ("" when no carrier served: no name is empty): D1, the
 * archive's rollups and the records queue's hourly rollups together (each record is summed in one of them).
 */
export async function sumsBy(d1: D1Database, accountId: string, filter: RecordFilter, by: GroupBy): Promise<Array<Sums & { name: string }>> {
  const d = db(d1);
  const live = { model: generations.model, key: generations.keyHash, carrier: generations.providerName }[by];
  const archived = { model: archiveRollups.model, key: archiveRollups.keyHash, carrier: archiveRollups.providerName }[by];
  const hourly = { model: recordRollups.model, key: recordRollups.keyHash, carrier: recordRollups.providerName }[by];
  const [inD1, inArchive, inHours] = await Promise.all([
    d
      .select({ name: sql<string>`coalesce(${live}, '')`, ...d1Sums })
      .from(generations)
      .where(recordWhere(accountId, filter))
      .groupBy(live)
      .all(),
    d
      .select({ name: sql<string>`coalesce(${archived}, '')`, ...rollupSums })
      .from(archiveRollups)
      .where(rollupWhere(accountId, filter))
      .groupBy(archived)
      .all(),
    d
      .select({ name: sql<string>`coalesce(${hourly}, '')`, ...hourlySums })
      .from(recordRollups)
      .where(hourlyWhere(accountId, filter))
      .groupBy(hourly)
      .all(),
  ]);
  return addUp([...inD1, ...inArchive, ...inHours], (r) => r.name)
    .filter(([, s]) => s.requests !== 0 || s.costNano !== 0)
    .map(([name, s]) => ({ name, ...s }));
}

/**
 * The filtered records summed per bucket of `bucketMs` (a day or an hour) from `since`: D1, the records
 * queue's hourly rollups and, per UTC day, the archive's.
 */
export async function sumsOverTime(d1: D1Database, accountId: string, filter: RecordFilter, bucketMs: number, since: number): Promise<Map<number, Sums>> {
  const d = db(d1);
  const bucket = sql<number>`cast(${generations.createdAt} / ${bucketMs} as integer)`;
  const hourBucket = sql<number>`cast(${recordRollups.hour} / ${bucketMs} as integer)`;
  const [inD1, inHours] = await Promise.all([
    d
      .select({ bucket, ...d1Sums })
      .from(generations)
      .where(and(recordWhere(accountId, filter), gte(generations.createdAt, since)))
      .groupBy(bucket)
      .all(),
    d
      .select({ bucket: hourBucket, ...hourlySums })
      .from(recordRollups)
      .where(and(hourlyWhere(accountId, filter), gte(recordRollups.hour, Math.floor(since / 3_600_000) * 3_600_000)))
      .groupBy(hourBucket)
      .all(),
  ]);
  const rows: Array<Sums & { bucket: number }> = [...inD1, ...inHours].map((r) => ({ ...r, bucket: Number(r.bucket) }));
  // Archived parts are whole UTC days: they fill day buckets (the hour view's 48 hours are never archived: RECORDS_RETENTION_DAYS ≥ 2).
  if (bucketMs % DAY_MS === 0) {
    const sinceDay = new Date(since).toISOString().slice(0, 10);
    const inArchive = await d
      .select({ day: archiveRollups.day, ...rollupSums })
      .from(archiveRollups)
      .where(and(rollupWhere(accountId, filter), gte(archiveRollups.day, sinceDay)))
      .groupBy(archiveRollups.day)
      .all();
    for (const { day, ...s } of inArchive) rows.push({ ...s, bucket: Math.floor(Date.parse(day) / bucketMs) });
  }
  return new Map(addUp(rows, (r) => r.bucket));
}

function addUp<R extends Sums, K>(rows: R[], keyOf: (r: R) => K): Array<[K, Sums]> {
  const out = new Map<K, Sums>();
  for (const r of rows) {
    const k = keyOf(r);
    const s = out.get(k) ?? { requests: 0, tokensPrompt: 0, tokensCompletion: 0, tokensCached: 0, costNano: 0 };
    s.requests += r.requests;
    s.tokensPrompt += r.tokensPrompt;
    s.tokensCompletion += r.tokensCompletion;
    s.tokensCached += r.tokensCached;
    s.costNano += r.costNano;
    out.set(k, s);
  }
  return [...out];
}
