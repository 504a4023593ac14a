import { archivedPartsOfDay, legacyIdPart } from "../db/archive-index";
import type { Generation } from "../db/schema";
import { partKey, recordInText, unpackRecords, unpackText, utcDay } from "./archive-format";
import { generationIdTime } from "./generation-id";

/** Parts read during one lookup, page or export, by key: each object is fetched once. */
export type PartCache = Map<string, Promise<Generation[]>>;

/** An indexed part's object body: one R2 read; its absence is an error (the index names only verified objects). */
async function partBody(bucket: R2Bucket, key: string): Promise<ReadableStream<Uint8Array>> {
  const object = await bucket.get(key);
  if (!object) throw new Error(`archive object ${key} is in the index but not in the bucket`);
  return object.body;
}

/** An archived part's records, oldest first (one R2 read, unless the cache has it). */
export function readPart(bucket: R2Bucket, key: string, cache?: PartCache): Promise<Generation[]> {
  const cached = cache?.get(key);
  if (cached) return cached;
  const read = partBody(bucket, key).then(unpackRecords);
  cache?.set(key, read);
  return read;
}

/**
 * One of the account's archived records, or undefined. A time-sortable id names its day and time, so
 * the index gives the part(s) whose time range covers it (one R2 read as a rule); an id of the older form
 * is found through `archived_legacy_ids`. Never another account's: the index is read for this account only.
 */
export async function findArchived(d1: D1Database, bucket: R2Bucket, accountId: string, id: string): Promise<Generation | undefined> {
  const at = generationIdTime(id);
  let keys: string[];
  if (at !== undefined) {
    const parts = await archivedPartsOfDay(d1, accountId, utcDay(at));
    keys = parts.filter((p) => p.firstAt <= at && at <= p.lastAt).map((p) => p.key);
  } else {
    const legacy = await legacyIdPart(d1, accountId, id);
    keys = legacy ? [partKey(accountId, legacy.day, legacy.part)] : [];
  }
  // Every part that may hold it (as a rule one): of two stored versions (a late settle's record replacing
  // an abandoned one, in two parts) the higher revision is current.
  let current: Generation | undefined;
  for (const key of keys) {
    const found = recordInText(await unpackText(await partBody(bucket, key)), id);
    if (found && found.accountId === accountId && (!current || found.rev > current.rev)) current = found;
  }
  return current;
}
