import { and, asc, count, eq, inArray, ne, type SQL } from "drizzle-orm";
import { db } from "../db/client";
import { apiKeys, byokKeys, type ByokKey } from "../db/schema";
import type { ByokKeyring } from "../settings/byok";
import { openCarrierKey, sealCarrierKey, type Sealed } from "./byok-crypto";

// An account's carrier keys in D1 (docs/byok.md). Every read and write is scoped to the account.

/** What a key is used with on the request path: never the plain key, which is decrypted only for the carrier called. */
export type ByokEntry = Pick<ByokKey, "id" | "accountId" | "provider" | "mode" | "allowFallback"> & { sealed: Sealed };

/** What an account sets on its key besides the key itself. */
export type ByokOptions = Partial<Pick<ByokKey, "name" | "mode" | "allowFallback" | "disabled">>;

const ofAccount = (accountId: string, id: string) => and(eq(byokKeys.id, id), eq(byokKeys.accountId, accountId));

/** The last four characters of a key: all that is ever shown of it again. */
export function last4(key: string): string {
  return key.slice(-4);
}

/** The account's enabled keys, one per carrier, as the request path uses them. */
export function accountByokEntries(d1: D1Database, accountId: string): Promise<ByokEntry[]> {
  return entriesWhere(d1, eq(byokKeys.accountId, accountId));
}

/**
 * The enabled keys of the account owning the API key `keyHash`: read with the key when the key cache
 * misses, in parallel with it (hence by the key's hash, not its account), and cached with it.
 */
export function keyByokEntries(d1: D1Database, keyHash: string): Promise<ByokEntry[]> {
  return entriesWhere(d1, inArray(byokKeys.accountId, db(d1).select({ id: apiKeys.accountId }).from(apiKeys).where(eq(apiKeys.hash, keyHash))));
}

async function entriesWhere(d1: D1Database, account: SQL | undefined): Promise<ByokEntry[]> {
  const rows = await db(d1)
    .select({
      id: byokKeys.id,
      accountId: byokKeys.accountId,
      provider: byokKeys.provider,
      mode: byokKeys.mode,
      allowFallback: byokKeys.allowFallback,
      ciphertext: byokKeys.ciphertext,
      iv: byokKeys.iv,
      keyVersion: byokKeys.keyVersion,
    })
    .from(byokKeys)
    .where(and(account, eq(byokKeys.disabled, false)))
    .all();
  return rows.map(({ ciphertext, iv, keyVersion, ...e }) => ({ ...e, sealed: { ciphertext, iv, keyVersion } }));
}

/** One page of the account's keys, oldest first, and how many match. */
export async function listByok(d1: D1Database, accountId: string, page: { offset: number; limit: number; provider?: string }) {
  const where = page.provider === undefined ? eq(byokKeys.accountId, accountId) : and(eq(byokKeys.accountId, accountId), eq(byokKeys.provider, page.provider));
  const [rows, total] = await Promise.all([
    db(d1).select().from(byokKeys).where(where).orderBy(asc(byokKeys.createdAt), asc(byokKeys.id)).limit(page.limit).offset(page.offset).all(),
    db(d1).select({ n: count() }).from(byokKeys).where(where).get(),
  ]);
  return { rows, total: total?.n ?? 0 };
}

export async function findByok(d1: D1Database, accountId: string, id: string): Promise<ByokKey | undefined> {
  return db(d1).select().from(byokKeys).where(ofAccount(accountId, id)).get();
}

/** The account's key for a carrier, if it has one. */
export async function findByokOfProvider(d1: D1Database, accountId: string, provider: string): Promise<ByokKey | undefined> {
  return db(d1)
    .select()
    .from(byokKeys)
    .where(and(eq(byokKeys.accountId, accountId), eq(byokKeys.provider, provider)))
    .get();
}

/**
 * Stores a new key for a carrier: "exists" when the account has one for it already (one key per carrier;
 * it is replaced with `updateByok`), null when no deployment key is set to encrypt it.
 */
export async function createByok(
  d1: D1Database,
  ring: ByokKeyring,
  accountId: string,
  provider: string,
  key: string,
  options: ByokOptions,
): Promise<ByokKey | "exists" | null> {
  const sealed = await sealCarrierKey(ring, accountId, provider, key);
  if (!sealed) return null;
  const row = await db(d1)
    .insert(byokKeys)
    .values({
      id: crypto.randomUUID(),
      accountId,
      provider,
      name: options.name ?? null,
      ...sealed,
      last4: last4(key),
      mode: options.mode ?? "first",
      allowFallback: options.allowFallback ?? false,
      disabled: options.disabled ?? false,
      createdAt: Date.now(),
    })
    .onConflictDoNothing()
    .returning()
    .get();
  return row ?? "exists";
}

/** Changes a key's options and, with `key`, replaces the key itself (its last error is then forgotten). Null: no keyring to encrypt with. */
export async function updateByok(
  d1: D1Database,
  ring: ByokKeyring,
  accountId: string,
  id: string,
  changes: ByokOptions & { key?: string },
): Promise<ByokKey | undefined | null> {
  const { key, ...options } = changes;
  let replaced = {};
  if (key !== undefined) {
    const row = await findByok(d1, accountId, id);
    if (!row) return undefined;
    const sealed = await sealCarrierKey(ring, accountId, row.provider, key);
    if (!sealed) return null;
    replaced = { ...sealed, last4: last4(key), lastError: null, lastErrorAt: null };
  }
  return db(d1)
    .update(byokKeys)
    .set({ ...options, ...replaced, updatedAt: Date.now() })
    .where(ofAccount(accountId, id))
    .returning()
    .get();
}

/** Deletes the key (its ciphertext with it); undefined when the account has no such key. */
export async function deleteByok(d1: D1Database, accountId: string, id: string): Promise<ByokKey | undefined> {
  return db(d1).delete(byokKeys).where(ofAccount(accountId, id)).returning().get();
}

/** Notes the carrier's refusal of a key (the console shows it); `message` never holds the key. */
export async function noteByokError(d1: D1Database, accountId: string, id: string, message: string, at: number): Promise<void> {
  await db(d1)
    .update(byokKeys)
    .set({ lastError: message.slice(0, 300), lastErrorAt: at })
    .where(ofAccount(accountId, id))
    .run();
}

/**
 * Re-encrypts every key not under the keyring's newest version (rotation: docs/byok.md), at most `limit`
 * a call. Returns how many moved and how many cannot be read (their version is gone, or altered).
 */
export async function reencryptByok(d1: D1Database, ring: ByokKeyring, limit: number): Promise<{ moved: number; unreadable: number; left: number }> {
  const newest = ring[0];
  if (!newest) return { moved: 0, unreadable: 0, left: 0 };
  const stale = await db(d1).select().from(byokKeys).where(ne(byokKeys.keyVersion, newest.version)).limit(limit).all();
  let moved = 0;
  let unreadable = 0;
  for (const row of stale) {
    const plain = await openCarrierKey(ring, row.accountId, row.provider, row);
    const sealed = plain === null ? null : await sealCarrierKey(ring, row.accountId, row.provider, plain);
    if (!sealed) {
      unreadable++;
      continue;
    }
    // Only if the row still holds what was read: a key replaced meanwhile is already under the newest version.
    const done = await db(d1)
      .update(byokKeys)
      .set(sealed)
      .where(and(eq(byokKeys.id, row.id), eq(byokKeys.ciphertext, row.ciphertext)))
      .returning({ id: byokKeys.id })
      .get();
    if (done) moved++;
  }
  const left = await db(d1).select({ n: count() }).from(byokKeys).where(ne(byokKeys.keyVersion, newest.version)).get();
  return { moved, unreadable, left: left?.n ?? 0 };
}
