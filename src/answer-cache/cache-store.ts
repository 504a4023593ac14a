import { and, desc, eq, lte } from "drizzle-orm";
import { db } from "../db/client";
import { answerCacheEntries } from "../db/schema";
import { decodeEntry, encodeEntry, type CacheEntry } from "./cache-entry";

/** Where cached answers live: KV (values, with their expiry) and D1 (each account's index, for its bounds). */
export type CacheStorage = { kv: KVNamespace; d1: D1Database };

/** An account's bounds (docs/caching.md): its cached answers' total compressed bytes and their number. */
export type AccountBounds = { maxBytes: number; maxEntries: number };

/** KV expires nothing sooner than 60 s after a write; a shorter TTL is enforced on read by the entry's own `expiresAt`. */
const KV_MIN_TTL_S = 60;

/** An entry's KV key: under its account's prefix, so no lookup can reach another account's entries. */
function kvKey(accountId: string, key: string): string {
  return `answer-cache/v1/${accountId}/${key}`;
}

/** The account's entry under `key` while it is fresh (`now` before its expiry); null when there is none. */
export async function readEntry(s: CacheStorage, accountId: string, key: string, now: number): Promise<CacheEntry | null> {
  const stored = await s.kv.get(kvKey(accountId, key), "arrayBuffer");
  if (stored === null) return null;
  const entry = await decodeEntry(stored);
  return entry !== null && entry.expiresAt > now ? entry : null;
}

/**
 * Stores an entry (off the response path, under waitUntil): the value in KV with its expiry, its row in the
 * account's index in D1; then the account's expired rows go, and its oldest entries beyond its bounds are
 * evicted from both. Two stores of one account at once may each see the other's row missing: the bound is
 * then passed by at most those entries until the account's next store trims it (docs/caching.md).
 * Returns the entry's stored size in bytes.
 */
export async function writeEntry(s: CacheStorage, accountId: string, key: string, entry: CacheEntry, bounds: AccountBounds): Promise<number> {
  const value = await encodeEntry(entry);
  const ttlS = Math.max(KV_MIN_TTL_S, Math.ceil((entry.expiresAt - entry.createdAt) / 1000));
  await s.kv.put(kvKey(accountId, key), value, { expirationTtl: ttlS });
  const q = db(s.d1);
  const own = eq(answerCacheEntries.accountId, accountId);
  const row = { accountId, key, bytes: value.byteLength, createdAt: entry.createdAt, expiresAt: entry.expiresAt };
  await q.batch([
    q
      .insert(answerCacheEntries)
      .values(row)
      .onConflictDoUpdate({ target: [answerCacheEntries.accountId, answerCacheEntries.key], set: row }),
    q.delete(answerCacheEntries).where(and(own, lte(answerCacheEntries.expiresAt, entry.createdAt))),
  ]);
  const rows = await q
    .select({ key: answerCacheEntries.key, bytes: answerCacheEntries.bytes })
    .from(answerCacheEntries)
    .where(own)
    .orderBy(desc(answerCacheEntries.createdAt));
  const evicted = beyondBounds(rows, bounds);
  for (const k of evicted) {
    await s.kv.delete(kvKey(accountId, k));
    await q.delete(answerCacheEntries).where(and(own, eq(answerCacheEntries.key, k)));
  }
  return value.byteLength;
}

/** The keys past an account's bounds, newest first in `rows`: every entry after the first that passes either bound. */
export function beyondBounds(rows: Array<{ key: string; bytes: number }>, bounds: AccountBounds): string[] {
  let bytes = 0;
  const out: string[] = [];
  rows.forEach((r, i) => {
    bytes += r.bytes;
    if (i >= bounds.maxEntries || bytes > bounds.maxBytes) out.push(r.key);
  });
  return out;
}
