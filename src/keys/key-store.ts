import { and, count, desc, eq, exists, isNull, or, sql } from "drizzle-orm";
import { db } from "../db/client";
import { accounts, apiKeys, members, type ApiKey } from "../db/schema";
import { forgetKey } from "./key-cache";
import { generateApiKey, hashApiKey, maskApiKey } from "./api-key";

/** Whose keys a caller sees: every key of the account (undefined), or only those one member made (a member's role: docs/teams.md). */
export type KeyScope = { memberId: string } | undefined;
const scopeWhere = (scope: KeyScope) => (scope ? eq(apiKeys.memberId, scope.memberId) : undefined);

/** A key by hash, as authentication reads it: a key whose member was removed from the account is no key (401). */
export async function findKeyByHash(d1: D1Database, hash: string): Promise<ApiKey | undefined> {
  const memberStays = or(
    isNull(apiKeys.memberId),
    exists(
      db(d1)
        .select({ one: sql`1` })
        .from(members)
        .where(eq(members.id, apiKeys.memberId)),
    ),
  );
  return db(d1)
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.hash, hash), memberStays))
    .get();
}

export type CreatedKey = { key: string; record: ApiKey };

/** Most keys, of both kinds, one account may have: the console and `POST /keys` create no more. */
export const MAX_KEYS_PER_ACCOUNT = 1000;

/** What a new key can be given besides its account and name. */
export type KeySettings = Partial<
  Pick<ApiKey, "limitNano" | "limitReset" | "includeByokInLimit" | "expiresAt" | "isManagement" | "memberId" | "answerCacheTtlS">
>;

async function newKey(accountId: string, name: string, settings: KeySettings, creationToken: string | null): Promise<CreatedKey> {
  const key = generateApiKey();
  const record: ApiKey = {
    hash: hashApiKey(key),
    accountId,
    name,
    label: maskApiKey(key),
    disabled: false,
    limitNano: settings.limitNano ?? null,
    limitReset: settings.limitReset ?? null,
    includeByokInLimit: settings.includeByokInLimit ?? false,
    expiresAt: settings.expiresAt ?? null,
    isManagement: settings.isManagement ?? false,
    createdAt: Date.now(),
    updatedAt: null,
    creationToken,
    memberId: settings.memberId ?? null,
    answerCacheTtlS: settings.answerCacheTtlS ?? null,
  };
  return { key, record };
}

/** Creates a key for an account; the plaintext is returned here and nowhere else. */
export async function createKey(d1: D1Database, accountId: string, name: string, settings: KeySettings = {}): Promise<CreatedKey> {
  const created = await newKey(accountId, name, settings, null);
  await db(d1).insert(apiKeys).values(created.record);
  return created;
}

/**
 * Creates a key for a form carrying a one-time creation token: the first submission creates it, any
 * other submission of that form (a reload, a double click, at once or later) creates nothing and gets
 * undefined — the token column is unique, so concurrent submissions cannot both insert.
 */
export async function createKeyOnce(
  d1: D1Database,
  accountId: string,
  name: string,
  settings: KeySettings,
  creationToken: string,
): Promise<CreatedKey | undefined> {
  const created = await newKey(accountId, name, settings, creationToken);
  const inserted = await db(d1)
    .insert(apiKeys)
    .values(created.record)
    .onConflictDoNothing({ target: apiKeys.creationToken })
    .returning({ hash: apiKeys.hash })
    .get();
  return inserted ? created : undefined;
}

/** Whether a key was already created by the form with this creation token (by any account: tokens are random and unique). */
export async function creationTokenUsed(d1: D1Database, creationToken: string): Promise<boolean> {
  return (await db(d1).select({ hash: apiKeys.hash }).from(apiKeys).where(eq(apiKeys.creationToken, creationToken)).get()) !== undefined;
}

/** Sets a key's disabled flag; returns the updated key, or undefined when there is none with that hash. */
export async function setKeyDisabled(d1: D1Database, hash: string, disabled: boolean): Promise<ApiKey | undefined> {
  const key = await db(d1).update(apiKeys).set({ disabled, updatedAt: Date.now() }).where(eq(apiKeys.hash, hash)).returning().get();
  forgetKey(hash); // after the write (see setKeyLimit)
  return key;
}

/**
 * Sets a key's credit limit (null = none); returns the updated key, or undefined when there is none with
 * that hash. This isolate forgets the key at once; others within the key cache's staleness (docs/request-path.md).
 */
export async function setKeyLimit(d1: D1Database, hash: string, limitNano: number | null): Promise<ApiKey | undefined> {
  const key = await db(d1).update(apiKeys).set({ limitNano, updatedAt: Date.now() }).where(eq(apiKeys.hash, hash)).returning().get();
  forgetKey(hash); // after the write: a request that read the old row meanwhile may have cached it
  return key;
}

export async function findAccount(d1: D1Database, idOrEmail: string) {
  const column = idOrEmail.includes("@") ? accounts.email : accounts.id;
  return db(d1).select().from(accounts).where(eq(column, idOrEmail)).get();
}

/** The account's keys, newest first. */
export async function listAccountKeys(d1: D1Database, accountId: string, scope?: KeyScope): Promise<ApiKey[]> {
  return db(d1)
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), scopeWhere(scope)))
    .orderBy(desc(apiKeys.createdAt))
    .all();
}

export async function countAccountKeys(d1: D1Database, accountId: string): Promise<number> {
  const row = await db(d1).select({ n: count() }).from(apiKeys).where(eq(apiKeys.accountId, accountId)).get();
  return row?.n ?? 0;
}

/** `setKeyDisabled` scoped to one account: another account's key is never touched (undefined). */
export async function setAccountKeyDisabled(d1: D1Database, accountId: string, hash: string, disabled: boolean, scope?: KeyScope): Promise<ApiKey | undefined> {
  const key = await db(d1)
    .update(apiKeys)
    .set({ disabled, updatedAt: Date.now() })
    .where(and(eq(apiKeys.hash, hash), eq(apiKeys.accountId, accountId), scopeWhere(scope)))
    .returning()
    .get();
  forgetKey(hash); // after the write (see setKeyLimit)
  return key;
}

/**
 * Deletes one of the account's keys: its row goes, so the API answers 401 for it from then on.
 * Its generations stay (they are the account's history). Returns the deleted key, or undefined.
 */
export async function deleteAccountKey(d1: D1Database, accountId: string, hash: string, scope?: KeyScope): Promise<ApiKey | undefined> {
  const key = await db(d1)
    .delete(apiKeys)
    .where(and(eq(apiKeys.hash, hash), eq(apiKeys.accountId, accountId), scopeWhere(scope)))
    .returning()
    .get();
  forgetKey(hash); // after the write (see setKeyLimit)
  return key;
}

/** One of the account's keys by hash; undefined for a key of another account. */
export async function findAccountKey(d1: D1Database, accountId: string, hash: string, scope?: KeyScope): Promise<ApiKey | undefined> {
  return db(d1)
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.hash, hash), eq(apiKeys.accountId, accountId), scopeWhere(scope)))
    .get();
}

/**
 * API keys, as the management API and the console's edit form see them: the account's keys that are
 * not management keys. A management key is never listed, changed or deleted through them, so a leaked
 * management key cannot remove or alter the account's other management keys.
 */
const apiKeyOf = (accountId: string, hash: string, scope?: KeyScope) =>
  and(eq(apiKeys.hash, hash), eq(apiKeys.accountId, accountId), eq(apiKeys.isManagement, false), scopeWhere(scope));

/** One page of the account's API keys, newest first (ties by hash, so pages never overlap). */
export async function listApiKeys(
  d1: D1Database,
  accountId: string,
  page: { includeDisabled: boolean; offset: number; limit: number },
  scope?: KeyScope,
): Promise<ApiKey[]> {
  const where = and(
    eq(apiKeys.accountId, accountId),
    eq(apiKeys.isManagement, false),
    page.includeDisabled ? undefined : eq(apiKeys.disabled, false),
    scopeWhere(scope),
  );
  return db(d1).select().from(apiKeys).where(where).orderBy(desc(apiKeys.createdAt), desc(apiKeys.hash)).limit(page.limit).offset(page.offset).all();
}

/** One of the account's API keys; undefined for another account's key or a management key. */
export async function findApiKey(d1: D1Database, accountId: string, hash: string, scope?: KeyScope): Promise<ApiKey | undefined> {
  return db(d1)
    .select()
    .from(apiKeys)
    .where(apiKeyOf(accountId, hash, scope))
    .get();
}

/** What the management API and the console's edit form may change. */
export type KeyChanges = Partial<Pick<ApiKey, "name" | "disabled" | "limitNano" | "limitReset" | "includeByokInLimit" | "expiresAt" | "answerCacheTtlS">>;

/** Changes one of the account's API keys and stamps `updated_at`; undefined when there is no such key (see `apiKeyOf`). */
export async function updateApiKey(d1: D1Database, accountId: string, hash: string, changes: KeyChanges, scope?: KeyScope): Promise<ApiKey | undefined> {
  const key = await db(d1)
    .update(apiKeys)
    .set({ ...changes, updatedAt: Date.now() })
    .where(apiKeyOf(accountId, hash, scope))
    .returning()
    .get();
  forgetKey(hash); // after the write (see setKeyLimit)
  return key;
}

/** Deletes one of the account's API keys (its generations stay); undefined when there is no such key. */
export async function deleteApiKey(d1: D1Database, accountId: string, hash: string, scope?: KeyScope): Promise<ApiKey | undefined> {
  const key = await db(d1)
    .delete(apiKeys)
    .where(apiKeyOf(accountId, hash, scope))
    .returning()
    .get();
  forgetKey(hash); // after the write (see setKeyLimit)
  return key;
}
