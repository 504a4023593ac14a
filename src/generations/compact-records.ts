import type { Env } from "../env";
import type { Generation } from "../db/schema";
import { claimParts, type BatchPart } from "../db/record-parts";
import { commitCompaction, daysToCompact, deletesDone, dropStaleMerge, dueDeletes, smallParts, staleMerges } from "../db/record-compaction";
import { logInfo } from "../log-error";
import type { Settings } from "../settings";
import { toHex } from "../keys/api-key";
import { batchPartKey, packPart } from "./archive-format";
import { readPart } from "./archive-read";
import { batchSeq } from "./batch-seq";

/** What one compaction run may do (settings: RECORDS_COMPACT_*, RECORDS_ARCHIVE_PART_RECORDS). */
export type CompactOptions = {
  now: number;
  /** Most records in a merged part; parts under half of it are small. */
  partRecords: number;
  /** Small parts stored at least this long ago are merged. */
  afterMs: number;
  daysPerRun: number;
  /** Objects merged away are deleted this long after. */
  deleteAfterMs: number;
  /** Called after each step of a merge; a throw there is a crash at that point (the tests' hook). */
  afterStep?: (step: CompactStep) => void | Promise<void>;
};
export type CompactStep = "claimed" | "written" | "committed";
export type CompactRun = { merged: number; parts: number; records: number; deleted: number };

/**
 * Merges the records queue's small parts (a batch's records of one day: a few records each for a quiet
 * account) into parts of up to `partRecords` records, per account and UTC day, so the parts' index grows
 * with records / partRecords rather than with batches. A merge: the small parts read, one version of each
 * record kept (the highest revision), packed, claimed `writing` under an id naming exactly the parts it
 * merges, written to R2, then one D1 transaction archives it and removes the merged parts' rows — only
 * if every one of them is still there. Their objects are deleted `deleteAfterMs` later. A crash at any
 * point leaves the small parts readable (or the merged part and nothing else); a merge never committed is
 * dropped after a day. Rollups are hourly sums, untouched by where records lie.
 */
export async function compactRecords(d1: D1Database, bucket: R2Bucket, o: CompactOptions): Promise<CompactRun> {
  const run: CompactRun = { merged: 0, parts: 0, records: 0, deleted: 0 };
  const small = Math.floor(o.partRecords / 2);
  for (const { accountId, day } of await daysToCompact(d1, small, o.now - o.afterMs, o.daysPerRun)) {
    const parts = await smallParts(d1, accountId, day, small, o.now - o.afterMs);
    const chosen: typeof parts = [];
    let total = 0;
    for (const p of parts) {
      if (chosen.length >= 2 && total + p.records > o.partRecords) break;
      chosen.push(p);
      total += p.records;
    }
    if (chosen.length < 2) continue;
    const versions = new Map<string, Generation>();
    for (const p of chosen)
      for (const g of await readPart(bucket, p.key)) {
        const seen = versions.get(g.id);
        if (!seen || g.rev > seen.rev) versions.set(g.id, g);
      }
    const records = [...versions.values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const from = chosen.map((p) => p.batch!);
    // Named by exactly the parts it merges: another set of parts is another merged part.
    const digest = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(from.join("\n"))))).slice(0, 16);
    const batch = `${accountId}:c${digest}-${Math.max(...from.map(batchSeq))}`;
    const { packed: bytes, ...facts } = await packPart(records);
    const part: BatchPart = { accountId, day, batch, key: batchPartKey(accountId, day, batch), ...facts };
    const [claim] = await claimParts(d1, [part], o.now);
    await o.afterStep?.("claimed");
    if (claim!.archived) continue;
    await bucket.put(part.key, bytes, {
      sha256: part.sha256,
      httpMetadata: { contentType: "application/gzip" },
      customMetadata: { records: String(part.records), account: accountId, day, batch },
    });
    await o.afterStep?.("written");
    if (await commitCompaction(d1, part, from, o.now, o.now + o.deleteAfterMs)) {
      run.merged++;
      run.parts += chosen.length;
      run.records += records.length;
    }
    await o.afterStep?.("committed");
  }
  // Merges claimed and never committed: their parts changed meanwhile, or the run died. A day is far past any run.
  for (const stale of await staleMerges(d1, o.now - 86_400_000)) {
    await bucket.delete(stale.key);
    await dropStaleMerge(d1, stale);
  }
  const due = await dueDeletes(d1, o.now, 1000);
  if (due.length > 0) {
    await bucket.delete(due);
    await deletesDone(d1, due);
    run.deleted = due.length;
  }
  return run;
}

/** The Cron Trigger's compaction run, with the Worker's settings. */
export async function compactFromEnv(env: Env, s: Settings, now = Date.now()): Promise<CompactRun> {
  const run = await compactRecords(env.DB, env.ARCHIVE, {
    now,
    partRecords: s.RECORDS_ARCHIVE_PART_RECORDS,
    afterMs: s.RECORDS_COMPACT_AFTER_MS,
    daysPerRun: s.RECORDS_COMPACT_DAYS_PER_RUN,
    deleteAfterMs: s.RECORDS_COMPACT_DELETE_AFTER_MS,
  });
  if (run.merged > 0 || run.deleted > 0) logInfo("records compacted", run);
  return run;
}
