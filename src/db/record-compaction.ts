/**
 * The D1 side of compacting the records queue's small parts (src/generations/compact-records.ts): which
 * account-days have small parts to merge, the merge's commit (the merged part archived and the small
 * parts' rows gone in one transaction), and the objects left to delete once no reader can still want them.
 */
import type { ArchivePart } from "./schema";
import { bindUsed } from "./bind-used";
import { batchPartCommitted } from "./record-parts";

/** Account-days with at least two small parts of the records queue, stored before `before`. */
export async function daysToCompact(d1: D1Database, small: number, before: number, limit: number): Promise<Array<{ accountId: string; day: string }>> {
  const { results } = await d1
    .prepare(
      // `records < ?1` first: a range of archive_parts_records visits only the small parts.
      `SELECT account_id, day FROM archive_parts
        WHERE records < ?1 AND batch IS NOT NULL AND state = 'archived' AND archived_at < ?2
        GROUP BY account_id, day HAVING count(*) >= 2 LIMIT ?3`,
    )
    .bind(small, before, limit)
    .all<{ account_id: string; day: string }>();
  return results.map((r) => ({ accountId: r.account_id, day: r.day }));
}

/** The small parts of an account-day stored before `before`, oldest part first. */
export async function smallParts(d1: D1Database, accountId: string, day: string, small: number, before: number): Promise<ArchivePart[]> {
  const { results } = await d1
    .prepare(
      `SELECT part, key, records, batch FROM archive_parts
        WHERE account_id = ?1 AND day = ?2 AND records < ?3 AND batch IS NOT NULL AND state = 'archived' AND archived_at < ?4
        ORDER BY part LIMIT 10000`,
    )
    .bind(accountId, day, small, before)
    .all<{ part: number; key: string; records: number; batch: string }>();
  return results.map((r) => ({ ...r, accountId, day }) as ArchivePart);
}

const MERGED = "batch IN (SELECT value FROM json_each(?6))";
const THIS_COMMIT = batchPartCommitted(1);
const COMPACT_SQL = [
  // Archived only while every merged part is still there, archived: nothing merged twice, nothing lost.
  `UPDATE archive_parts SET state = 'archived', archived_at = ?5, commit_id = ?4
     WHERE account_id = ?1 AND day = ?2 AND batch = ?3 AND state = 'writing'
       AND (SELECT count(*) FROM archive_parts WHERE account_id = ?1 AND day = ?2 AND state = 'archived' AND ${MERGED}) = ?7`,
  `INSERT OR IGNORE INTO record_object_deletes (key, after)
     SELECT key, ?8 FROM archive_parts WHERE account_id = ?1 AND day = ?2 AND ${MERGED} AND ${THIS_COMMIT}`,
  `DELETE FROM archive_parts WHERE account_id = ?1 AND day = ?2 AND ${MERGED} AND ${THIS_COMMIT}`,
];

/**
 * In one D1 batch (one transaction): the merged part (claimed `writing`) becomes archived and the parts
 * it merged leave the index, their objects queued for deletion at `deleteAfter`. Returns whether this
 * call committed it; false leaves everything as it was.
 */
export async function commitCompaction(
  d1: D1Database,
  merged: { accountId: string; day: string; batch: string },
  from: readonly string[],
  now: number,
  deleteAfter: number,
): Promise<boolean> {
  const commitId = crypto.randomUUID();
  const params = [merged.accountId, merged.day, merged.batch, commitId, now, JSON.stringify(from), from.length, deleteAfter];
  const results = await d1.batch(COMPACT_SQL.map((q) => bindUsed(d1, q, params)));
  return results[0]!.meta.changes === 1;
}

/** Merged parts claimed and never committed (a run that crashed, or whose parts changed meanwhile), older than `before`: their rows and keys. */
export async function staleMerges(d1: D1Database, before: number): Promise<Array<{ accountId: string; day: string; part: number; key: string }>> {
  const { results } = await d1
    .prepare("SELECT account_id, day, part, key FROM archive_parts WHERE state = 'writing' AND batch LIKE '%:c%' AND written_at < ?1 LIMIT 1000")
    .bind(before)
    .all<{ account_id: string; day: string; part: number; key: string }>();
  return results.map((r) => ({ accountId: r.account_id, day: r.day, part: r.part, key: r.key }));
}

export async function dropStaleMerge(d1: D1Database, p: { accountId: string; day: string; part: number }): Promise<void> {
  await d1.prepare("DELETE FROM archive_parts WHERE account_id = ?1 AND day = ?2 AND part = ?3 AND state = 'writing'").bind(p.accountId, p.day, p.part).run();
}

/** Objects due for deletion (at most `limit`). */
export async function dueDeletes(d1: D1Database, now: number, limit: number): Promise<string[]> {
  const { results } = await d1.prepare("SELECT key FROM record_object_deletes WHERE after <= ?1 LIMIT ?2").bind(now, limit).all<{ key: string }>();
  return results.map((r) => r.key);
}

export async function deletesDone(d1: D1Database, keys: readonly string[]): Promise<void> {
  await d1.prepare("DELETE FROM record_object_deletes WHERE key IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(keys)).run();
}
