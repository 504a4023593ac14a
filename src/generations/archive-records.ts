import { DAY_MS } from "../db/record-filter";
import { commitPart, d1SizeBytes, markWriting, nextPart, oldestBefore, recordsBetween, type PartDraft } from "../db/archive-index";
import type { Env } from "../env";
import { logWarning } from "../log-error";
import type { Settings } from "../settings";
import { packPart, partKey, sha256Bytes, unpackRecords, utcDay } from "./archive-format";

/** What one archive run may do, and where (settings: RECORDS_RETENTION_DAYS, RECORDS_ARCHIVE_*). */
export type ArchiveOptions = {
  now: number;
  retentionDays: number;
  partRecords: number;
  /** Most parts a run tries; and the run starts no part after `runMs` of wall time. */
  partsPerRun: number;
  runMs: number;
  /** Account-days archived at once (each one part at a time). */
  concurrency: number;
  /** Called after each step of a part; a throw there is a crash at that point (the tests' hook). */
  afterStep?: (step: ArchiveStep, part: PartDraft) => void | Promise<void>;
  /** Move every record made before this instead of those past the retention (the move of an earlier release's records). */
  before?: number;
};
export type ArchiveStep = "marked" | "written" | "verified" | "committed";
export type ArchiveRun = { parts: number; records: number; notCommitted: number; done: boolean };

/** The first ms still kept in D1: the start of the UTC day `retentionDays` before today. */
export function retentionCutoff(now: number, retentionDays: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS - retentionDays * DAY_MS;
}

/**
 * Moves generation records older than the retention from D1 to R2, part by part: the oldest account-days
 * first, up to `concurrency` distinct ones at a time, until none is left, `partsPerRun` were tried or the
 * run's time (`runMs`) is spent. A part: its records (up to `partRecords`) packed, the part marked
 * `writing` in the index, the object put, read back and checked (checksum, the same ids in the same
 * order), then one D1 batch marks it archived and deletes exactly those records at the revision copied.
 * A crash at any point leaves either the records in D1 (the part is written again, at the same key, by
 * the next run) or the part archived and the records gone: never both, never neither. A part that fails
 * fails the run, once the parts beside it are done.
 */
export async function archiveRecords(d1: D1Database, bucket: R2Bucket, o: ArchiveOptions): Promise<ArchiveRun> {
  const cutoff = o.before ?? retentionCutoff(o.now, o.retentionDays);
  const deadline = Date.now() + o.runMs;
  const run: ArchiveRun = { parts: 0, records: 0, notCommitted: 0, done: false };
  while (run.parts + run.notCommitted < o.partsPerRun && Date.now() < deadline) {
    const units = await nextUnits(d1, cutoff, Math.min(o.concurrency, o.partsPerRun - run.parts - run.notCommitted));
    if (units.length === 0) {
      run.done = true;
      break;
    }
    const results = await Promise.allSettled(units.map((u) => archivePart(d1, bucket, u, o)));
    for (const r of results) {
      if (r.status === "rejected") continue;
      if (r.value === null) run.notCommitted++;
      else {
        run.parts++;
        run.records += r.value;
      }
    }
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
  return run;
}

/** An account's UTC day with records to archive. */
type Unit = { accountId: string; day: string };

/** Up to `n` distinct account-days among the oldest records before the cutoff, oldest first. */
async function nextUnits(d1: D1Database, cutoff: number, n: number): Promise<Unit[]> {
  const units = new Map<string, Unit>();
  for (const r of await oldestBefore(d1, cutoff, UNIT_SAMPLE)) {
    const unit = { accountId: r.accountId, day: utcDay(r.createdAt) };
    units.set(`${unit.accountId}/${unit.day}`, unit);
    if (units.size === n) break;
  }
  return [...units.values()];
}
/** Oldest records looked at to find distinct account-days: a day with more records than this is one unit anyway. */
const UNIT_SAMPLE = 1_000;

/** Archives the next part of an account's day: its record count, or null when it was not committed (tried again next). */
async function archivePart(d1: D1Database, bucket: R2Bucket, { accountId, day }: Unit, o: ArchiveOptions): Promise<number | null> {
  const dayStart = Date.parse(day);
  const records = await recordsBetween(d1, accountId, dayStart, dayStart + DAY_MS, o.partRecords);
  if (records.length === 0) return null; // archived by another run meanwhile
  const part = await nextPart(d1, accountId, day);
  const { packed: bytes, ...facts } = await packPart(records);
  const draft: PartDraft = {
    accountId,
    day,
    part,
    key: partKey(accountId, day, part),
    ...facts,
    writtenAt: o.now,
    batch: null,
  };
  if (!(await markWriting(d1, draft))) return null; // another run archived this part meanwhile
  await o.afterStep?.("marked", draft);
  await bucket.put(draft.key, bytes, {
    sha256: draft.sha256,
    httpMetadata: { contentType: "application/gzip" },
    customMetadata: { records: String(draft.records), account: accountId, day },
  });
  await o.afterStep?.("written", draft);
  await verify(bucket, draft, records);
  await o.afterStep?.("verified", draft);
  const committed = await commitPart(d1, draft, records, o.now);
  if (!committed)
    logWarning("archive part not committed", {
      key: draft.key,
      reason: "a record changed since it was copied, or another run owns the part; written again next run",
    });
  await o.afterStep?.("committed", draft);
  return committed ? records.length : null;
}

/** The object as stored is the one packed: same checksum, same records in the same order. */
async function verify(bucket: R2Bucket, draft: PartDraft, records: readonly { id: string }[]): Promise<void> {
  const object = await bucket.get(draft.key);
  if (!object) throw new Error(`archive object ${draft.key} is missing after its write`);
  const bytes = new Uint8Array(await object.arrayBuffer());
  if ((await sha256Bytes(bytes)) !== draft.sha256) throw new Error(`archive object ${draft.key} does not match its checksum`);
  const stored = await unpackRecords(bytes);
  if (stored.length !== records.length || stored.some((g, i) => g.id !== records[i]!.id))
    throw new Error(`archive object ${draft.key} does not hold the records copied`);
}

/** D1 past the warning fraction of its limit: one log line per archive run. */
export async function warnOnD1Size(d1: D1Database, limitBytes: number, warnPercent: number): Promise<number | null> {
  const size = await d1SizeBytes(d1);
  if (size !== null && size >= (limitBytes * warnPercent) / 100)
    logWarning("d1 size warning", { size_bytes: size, limit_bytes: limitBytes, percent: Math.round((size / limitBytes) * 1000) / 10 });
  return size;
}

/**
 * Moves every record still in D1 to R2 (records of a release before the records queue: new ones never
 * land in D1), one run of the archive's parts with the Worker's settings; call again until `done`.
 */
export async function moveRecordsFromD1(env: Env, s: Settings, now = Date.now()): Promise<ArchiveRun> {
  return archiveRecords(env.DB, env.ARCHIVE, {
    now,
    before: now,
    retentionDays: s.RECORDS_RETENTION_DAYS,
    partRecords: s.RECORDS_ARCHIVE_PART_RECORDS,
    partsPerRun: s.RECORDS_ARCHIVE_PARTS_PER_RUN,
    runMs: s.RECORDS_ARCHIVE_RUN_MS,
    concurrency: s.RECORDS_ARCHIVE_CONCURRENCY,
  });
}

/** The Cron Trigger's archive run, with the Worker's settings. */
export async function archiveFromEnv(env: Env, s: Settings, now = Date.now()): Promise<ArchiveRun> {
  try {
    return await archiveRecords(env.DB, env.ARCHIVE, {
      now,
      retentionDays: s.RECORDS_RETENTION_DAYS,
      partRecords: s.RECORDS_ARCHIVE_PART_RECORDS,
      partsPerRun: s.RECORDS_ARCHIVE_PARTS_PER_RUN,
      runMs: s.RECORDS_ARCHIVE_RUN_MS,
      concurrency: s.RECORDS_ARCHIVE_CONCURRENCY,
    });
  } finally {
    // Also when the run failed: a D1 filling up because the archive is stuck is when this line matters most.
    await warnOnD1Size(env.DB, s.D1_SIZE_LIMIT_BYTES, s.D1_SIZE_WARN_PERCENT);
  }
}
