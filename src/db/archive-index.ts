import { and, asc, desc, eq, gte, isNull, lt, sql } from "drizzle-orm";
import { db } from "./client";
import { bindUsed } from "./bind-used";
import { archiveParts, archivedLegacyIds, deadRecordBatches, generations, recordRollups, type ArchivePart, type Generation } from "./schema";

/**
 * The D1 side of the records archive (docs/storage.md): which records are past retention, the index of
 * archived parts, and the one batch that marks a part archived, adds its rollups and deletes its records.
 */

/** The oldest records created before `cutoff` (any account), oldest first: what to archive next. */
export function oldestBefore(d1: D1Database, cutoff: number, limit: number): Promise<Array<{ accountId: string; createdAt: number }>> {
  return db(d1)
    .select({ accountId: generations.accountId, createdAt: generations.createdAt })
    .from(generations)
    .where(lt(generations.createdAt, cutoff))
    .orderBy(asc(generations.createdAt))
    .limit(limit)
    .all();
}

/** Up to `limit` of an account's records created in [from, to), oldest first by (created_at, id). */
export function recordsBetween(d1: D1Database, accountId: string, from: number, to: number, limit: number): Promise<Generation[]> {
  return db(d1)
    .select()
    .from(generations)
    .where(and(eq(generations.accountId, accountId), gte(generations.createdAt, from), lt(generations.createdAt, to)))
    .orderBy(asc(generations.createdAt), asc(generations.id))
    .limit(limit)
    .all();
}

/**
 * The part to write next for an account's day: one left `writing` by an earlier run, else the next number.
 * The records queue numbers its parts in the same days (src/db/record-parts.ts): one of those left
 * `writing` is never taken over (markWriting refuses it too).
 */
export async function nextPart(d1: D1Database, accountId: string, day: string): Promise<number> {
  const last = await db(d1)
    .select({ part: archiveParts.part, state: archiveParts.state, batch: archiveParts.batch })
    .from(archiveParts)
    .where(and(eq(archiveParts.accountId, accountId), eq(archiveParts.day, day)))
    .orderBy(desc(archiveParts.part))
    .limit(1)
    .get();
  if (!last) return 0;
  return last.state === "writing" && last.batch === null ? last.part : last.part + 1;
}

export type PartDraft = Omit<ArchivePart, "state" | "archivedAt" | "commitId">;

/**
 * Records the part as `writing` with what its object will hold (its checksum is the writer's claim on
 * it: a commit acts only on the checksum the row still has). Returns false when the part is already
 * archived (another run finished it first): then nothing may be written to its key.
 */
export async function markWriting(d1: D1Database, p: PartDraft): Promise<boolean> {
  const row = { ...p, state: "writing" as const, archivedAt: null, commitId: null };
  const { state: _s, accountId: _a, day: _d, part: _p, key: _k, ...changed } = row;
  const result = await db(d1)
    .insert(archiveParts)
    .values(row)
    .onConflictDoUpdate({
      target: [archiveParts.accountId, archiveParts.day, archiveParts.part],
      set: changed,
      setWhere: and(eq(archiveParts.state, "writing"), isNull(archiveParts.batch)),
    })
    .run();
  return result.meta.changes === 1;
}

const PART = `account_id = ?1 AND day = ?2 AND part = ?3`;
/**
 * The part's records still in D1 at the revision archived: ?4 their ids, ?5 "id:rev" of each. `+account_id`
 * keeps SQLite from walking the account's index (every record of the account) instead of the ids' primary key.
 */
const ARCHIVED_ROWS = `+account_id = ?1 AND id IN (SELECT value FROM json_each(?4)) AND (id || ':' || rev) IN (SELECT value FROM json_each(?5))`;
/** True only inside the batch whose first statement archived the part (?6 its commit id). */
const THIS_COMMIT = `EXISTS (SELECT 1 FROM archive_parts WHERE ${PART} AND state = 'archived' AND commit_id = ?6)`;
export const COMMIT_SQL = [
  // Archived only if every record of the object is still in D1 exactly as copied, and the row still names this object.
  `UPDATE archive_parts SET state = 'archived', archived_at = ?7, commit_id = ?6
     WHERE ${PART} AND state = 'writing' AND sha256 = ?8 AND records = ?9
       AND (SELECT count(*) FROM generations WHERE ${ARCHIVED_ROWS}) = ?9`,
  `INSERT INTO archive_rollups (account_id, day, part, model, key_hash, provider_name, requests, tokens_prompt, tokens_completion, tokens_cached, cost_nano)
     SELECT ?1, ?2, ?3, model, key_hash, provider_name, count(*), sum(tokens_prompt), sum(tokens_completion), sum(tokens_cached), sum(cost_nano)
     FROM generations WHERE ${ARCHIVED_ROWS} AND ${THIS_COMMIT} GROUP BY model, key_hash, provider_name`,
  // Ids without a time (made before time-sortable ids) are found through this table once archived.
  `INSERT OR REPLACE INTO archived_legacy_ids (id, account_id, day, part)
     SELECT id, ?1, ?2, ?3 FROM generations WHERE ${ARCHIVED_ROWS} AND length(id) <> 36 AND ${THIS_COMMIT}`,
  `DELETE FROM endpoint_attempts WHERE generation_id IN (SELECT id FROM generations WHERE ${ARCHIVED_ROWS}) AND ${THIS_COMMIT}`,
  `DELETE FROM generations WHERE ${ARCHIVED_ROWS} AND ${THIS_COMMIT}`,
];

/**
 * In one D1 batch (one transaction): marks the verified part archived and, only if that happened in this
 * batch, adds its rollups and deletes its records from D1. Returns whether it archived the part; false
 * leaves everything as it was (a record changed since it was copied, or another run owns the part).
 */
export async function commitPart(d1: D1Database, p: PartDraft, records: readonly Pick<Generation, "id" | "rev">[], now: number): Promise<boolean> {
  const commitId = crypto.randomUUID();
  const ids = JSON.stringify(records.map((r) => r.id));
  const revs = JSON.stringify(records.map((r) => `${r.id}:${r.rev}`));
  const params = [p.accountId, p.day, p.part, ids, revs, commitId, now, p.sha256, p.records];
  const results = await d1.batch(COMMIT_SQL.map((q) => bindUsed(d1, q, params)));
  return results[0]!.meta.changes === 1;
}

/** The archived parts of an account's day, newest part first. */
export function archivedPartsOfDay(d1: D1Database, accountId: string, day: string): Promise<ArchivePart[]> {
  return db(d1)
    .select()
    .from(archiveParts)
    .where(and(eq(archiveParts.accountId, accountId), eq(archiveParts.day, day), eq(archiveParts.state, "archived")))
    .orderBy(desc(archiveParts.part))
    .all();
}

/** archiveTotals' query, not yet run: to read it in one D1 batch (one snapshot) beside others. */
function archiveTotalsQuery(d1: D1Database, accountId?: string) {
  return db(d1)
    .select({
      objects: sql<number>`count(*)`,
      bytes: sql<number>`coalesce(sum(${archiveParts.bytes}), 0)`,
      records: sql<number>`coalesce(sum(${archiveParts.records}), 0)`,
      costNano: sql<number>`coalesce(sum(${archiveParts.costNano}), 0)`,
    })
    .from(archiveParts)
    .where(accountId === undefined ? eq(archiveParts.state, "archived") : and(eq(archiveParts.accountId, accountId), eq(archiveParts.state, "archived")));
}
type ArchiveTotals = { objects: number; bytes: number; records: number; costNano: number };
const archiveTotalsOf = (row: Partial<ArchiveTotals> | undefined): ArchiveTotals => ({
  objects: row?.objects ?? 0,
  bytes: row?.bytes ?? 0,
  records: row?.records ?? 0,
  costNano: row?.costNano ?? 0,
});

/** Objects, bytes and records of the archive: one account's, or the whole service's. */
export async function archiveTotals(d1: D1Database, accountId?: string): Promise<ArchiveTotals> {
  return archiveTotalsOf(await archiveTotalsQuery(d1, accountId).get());
}

/**
 * An account's records in D1 and in the archive, read in one D1 batch (one transaction, so one snapshot):
 * a part archived meanwhile is counted once, on one side or the other, never on both or neither. The
 * records queue's parts are counted by their rollups (`stored`), which count a record once even when a
 * late settle's record replaced an abandoned one stored earlier; the archive's own parts by their rows.
 */
export async function recordTotals(
  d1: D1Database,
  accountId: string,
): Promise<{ d1: { count: number; costNano: number }; archive: ArchiveTotals; stored: { count: number; costNano: number }; deadBatches: number }> {
  const q = db(d1);
  const [inD1, archived, moved, stored, dead] = await q.batch([
    q
      .select({ count: sql<number>`count(*)`, costNano: sql<number>`coalesce(sum(${generations.costNano}), 0)` })
      .from(generations)
      .where(eq(generations.accountId, accountId)),
    archiveTotalsQuery(d1, accountId),
    q
      .select({ records: sql<number>`coalesce(sum(${archiveParts.records}), 0)`, costNano: sql<number>`coalesce(sum(${archiveParts.costNano}), 0)` })
      .from(archiveParts)
      .where(and(eq(archiveParts.accountId, accountId), eq(archiveParts.state, "archived"), isNull(archiveParts.batch))),
    q
      .select({ count: sql<number>`coalesce(sum(${recordRollups.requests}), 0)`, costNano: sql<number>`coalesce(sum(${recordRollups.costNano}), 0)` })
      .from(recordRollups)
      .where(eq(recordRollups.accountId, accountId)),
    q
      .select({ n: sql<number>`count(*)` })
      .from(deadRecordBatches)
      .where(eq(deadRecordBatches.accountId, accountId)),
  ]);
  const all = archiveTotalsOf(archived[0]);
  return {
    d1: { count: inD1[0]?.count ?? 0, costNano: inD1[0]?.costNano ?? 0 },
    // The archive's own parts (records moved out of D1): the records queue's are in `stored`.
    archive: { ...all, records: moved[0]?.records ?? 0, costNano: moved[0]?.costNano ?? 0 },
    stored: { count: stored[0]?.count ?? 0, costNano: stored[0]?.costNano ?? 0 },
    deadBatches: dead[0]?.n ?? 0,
  };
}

/** Where an archived record with an id of the older, random-only form went, if it is one of the account's. */
export function legacyIdPart(d1: D1Database, accountId: string, id: string): Promise<{ day: string; part: number } | undefined> {
  return db(d1)
    .select({ day: archivedLegacyIds.day, part: archivedLegacyIds.part })
    .from(archivedLegacyIds)
    .where(and(eq(archivedLegacyIds.id, id), eq(archivedLegacyIds.accountId, accountId)))
    .get();
}

/** D1's size in bytes, as D1 reports it after a statement. */
export async function d1SizeBytes(d1: D1Database): Promise<number | null> {
  const result = await d1.prepare("SELECT 1").run();
  return typeof result.meta.size_after === "number" ? result.meta.size_after : null;
}
