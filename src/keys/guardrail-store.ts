import { and, asc, count, desc, eq, inArray } from "drizzle-orm";
import { db } from "../db/client";
import { union } from "drizzle-orm/sqlite-core";
import { apiKeys, guardrailKeys, guardrailMembers, guardrails, type ApiKey, type Guardrail } from "../db/schema";
import { forgetKey } from "./key-cache";
import type { GuardrailRules } from "../guardrails/rules";

/** What a guardrail is made of, besides its id, account and times. */
export type GuardrailFields = Omit<Guardrail, "id" | "accountId" | "createdAt" | "updatedAt">;

/** A guardrail with no rule (every field null or off) but its name: what a new one starts from before its given fields. */
export const NO_RULES: Omit<GuardrailFields, "name"> = {
  description: null,
  allowedModels: null,
  ignoredModels: null,
  allowedProviders: null,
  ignoredProviders: null,
  zdrAnthropic: false,
  zdrOpenai: false,
  zdrGoogle: false,
  zdrXai: false,
  zdrOther: false,
  maxPromptNano: null,
  maxCompletionNano: null,
};

/** D1 binds at most 100 parameters per statement: key hashes go in chunks that leave room for the others. */
const HASHES_PER_STATEMENT = 90;
/** An assignment row binds 5 parameters. */
const ROWS_PER_INSERT = 20;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const ofAccount = (accountId: string, id: string) => and(eq(guardrails.id, id), eq(guardrails.accountId, accountId));

/**
 * The rules of every guardrail a key carries — its own and its member's, one query (a guardrail assigned both
 * ways counts once) — oldest guardrail first (the order a refusal names them).
 */
export async function keyGuardrails(d1: D1Database, keyHash: string): Promise<GuardrailRules[]> {
  const q = db(d1);
  const carried = union(
    q.select({ id: guardrailKeys.guardrailId }).from(guardrailKeys).where(eq(guardrailKeys.keyHash, keyHash)),
    // Its member's (none when the key has no member: a null member_id joins nothing).
    q
      .select({ id: guardrailMembers.guardrailId })
      .from(guardrailMembers)
      .innerJoin(apiKeys, and(eq(apiKeys.memberId, guardrailMembers.memberId), eq(apiKeys.accountId, guardrailMembers.accountId)))
      .where(eq(apiKeys.hash, keyHash)),
  );
  return q
    .select({
      id: guardrails.id,
      name: guardrails.name,
      allowedModels: guardrails.allowedModels,
      ignoredModels: guardrails.ignoredModels,
      allowedProviders: guardrails.allowedProviders,
      ignoredProviders: guardrails.ignoredProviders,
      zdrAnthropic: guardrails.zdrAnthropic,
      zdrOpenai: guardrails.zdrOpenai,
      zdrGoogle: guardrails.zdrGoogle,
      zdrXai: guardrails.zdrXai,
      zdrOther: guardrails.zdrOther,
      maxPromptNano: guardrails.maxPromptNano,
      maxCompletionNano: guardrails.maxCompletionNano,
    })
    .from(guardrails)
    .where(inArray(guardrails.id, carried))
    .orderBy(asc(guardrails.createdAt), asc(guardrails.id))
    .all();
}

/** One page of the account's guardrails, newest first, and how many it has. */
export async function listGuardrails(d1: D1Database, accountId: string, page: { offset: number; limit: number }) {
  const [rows, total] = await Promise.all([
    db(d1)
      .select()
      .from(guardrails)
      .where(eq(guardrails.accountId, accountId))
      .orderBy(desc(guardrails.createdAt), desc(guardrails.id))
      .limit(page.limit)
      .offset(page.offset)
      .all(),
    countGuardrails(d1, accountId),
  ]);
  return { rows, total };
}

export async function countGuardrails(d1: D1Database, accountId: string): Promise<number> {
  return (await db(d1).select({ n: count() }).from(guardrails).where(eq(guardrails.accountId, accountId)).get())?.n ?? 0;
}

/** One of the account's guardrails; undefined for another account's. */
export async function findGuardrail(d1: D1Database, accountId: string, id: string): Promise<Guardrail | undefined> {
  return db(d1).select().from(guardrails).where(ofAccount(accountId, id)).get();
}

export async function createGuardrail(d1: D1Database, accountId: string, fields: GuardrailFields): Promise<Guardrail> {
  const row: Guardrail = { ...fields, id: crypto.randomUUID(), accountId, createdAt: Date.now(), updatedAt: null };
  await db(d1).insert(guardrails).values(row);
  return row;
}

/** The hashes of the keys carrying a guardrail, their own or their member's: this isolate forgets them after a change, so it applies at once here. */
async function assignedHashes(d1: D1Database, id: string): Promise<string[]> {
  const q = db(d1);
  const rows = await union(
    q.select({ hash: guardrailKeys.keyHash }).from(guardrailKeys).where(eq(guardrailKeys.guardrailId, id)),
    q
      .select({ hash: apiKeys.hash })
      .from(apiKeys)
      .innerJoin(guardrailMembers, and(eq(guardrailMembers.memberId, apiKeys.memberId), eq(guardrailMembers.accountId, apiKeys.accountId)))
      .where(eq(guardrailMembers.guardrailId, id)),
  ).all();
  return rows.map((r) => r.hash);
}

/** Changes one of the account's guardrails; undefined when it has none with that id. Other isolates see it within the key cache's staleness. */
export async function updateGuardrail(d1: D1Database, accountId: string, id: string, changes: Partial<GuardrailFields>): Promise<Guardrail | undefined> {
  const row = await db(d1)
    .update(guardrails)
    .set({ ...changes, updatedAt: Date.now() })
    .where(ofAccount(accountId, id))
    .returning()
    .get();
  if (row) for (const hash of await assignedHashes(d1, id)) forgetKey(hash); // after the write (see setKeyLimit)
  return row;
}

/** Deletes one of the account's guardrails and its assignments (cascade); undefined when there is none. */
export async function deleteGuardrail(d1: D1Database, accountId: string, id: string): Promise<Guardrail | undefined> {
  const hashes = await assignedHashes(d1, id);
  const row = await db(d1).delete(guardrails).where(ofAccount(accountId, id)).returning().get();
  for (const hash of hashes) forgetKey(hash);
  return row;
}

/** Of `hashes`, those that are not the account's API keys (management keys carry no guardrails). */
export async function notApiKeys(d1: D1Database, accountId: string, hashes: string[]): Promise<string[]> {
  const q = db(d1);
  const found = await Promise.all(
    chunks(hashes, HASHES_PER_STATEMENT).map((part) =>
      q
        .select({ hash: apiKeys.hash })
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.isManagement, false), inArray(apiKeys.hash, part)))
        .all(),
    ),
  );
  const known = new Set(found.flat().map((r) => r.hash));
  return hashes.filter((h) => !known.has(h));
}

/** Assigns the guardrail to keys (all of them the account's API keys: `notApiKeys` first); how many were not assigned before. */
export async function assignKeys(d1: D1Database, accountId: string, guardrailId: string, hashes: string[]): Promise<number> {
  if (hashes.length === 0) return 0;
  const now = Date.now();
  const rows = hashes.map((keyHash) => ({ guardrailId, keyHash, accountId, id: crypto.randomUUID(), createdAt: now }));
  const q = db(d1);
  const [first, ...rest] = chunks(rows, ROWS_PER_INSERT).map((part) =>
    q.insert(guardrailKeys).values(part).onConflictDoNothing().returning({ hash: guardrailKeys.keyHash }),
  );
  const inserted = await q.batch([first!, ...rest]); // one transaction: all chunks or none
  for (const h of hashes) forgetKey(h);
  return inserted.reduce((n, r) => n + r.length, 0);
}

/** Takes the guardrail off keys; how many carried it. */
export async function unassignKeys(d1: D1Database, accountId: string, guardrailId: string, hashes: string[]): Promise<number> {
  if (hashes.length === 0) return 0;
  const q = db(d1);
  const [first, ...rest] = chunks(hashes, HASHES_PER_STATEMENT).map((part) =>
    q
      .delete(guardrailKeys)
      .where(and(eq(guardrailKeys.accountId, accountId), eq(guardrailKeys.guardrailId, guardrailId), inArray(guardrailKeys.keyHash, part)))
      .returning({ hash: guardrailKeys.keyHash }),
  );
  const removed = await q.batch([first!, ...rest]);
  for (const h of hashes) forgetKey(h);
  return removed.reduce((n, r) => n + r.length, 0);
}

export type Assignment = { id: string; guardrailId: string; keyHash: string; createdAt: number; key: Pick<ApiKey, "name" | "label"> };

/** One page of the account's key assignments (of one guardrail, or all), newest first, and how many there are. */
export async function listAssignments(d1: D1Database, accountId: string, guardrailId: string | null, page: { offset: number; limit: number }) {
  const where = and(eq(guardrailKeys.accountId, accountId), guardrailId === null ? undefined : eq(guardrailKeys.guardrailId, guardrailId));
  const [rows, total] = await Promise.all([
    db(d1)
      .select({
        id: guardrailKeys.id,
        guardrailId: guardrailKeys.guardrailId,
        keyHash: guardrailKeys.keyHash,
        createdAt: guardrailKeys.createdAt,
        key: { name: apiKeys.name, label: apiKeys.label },
      })
      .from(guardrailKeys)
      .innerJoin(apiKeys, eq(apiKeys.hash, guardrailKeys.keyHash))
      .where(where)
      .orderBy(desc(guardrailKeys.createdAt), desc(guardrailKeys.id))
      .limit(page.limit)
      .offset(page.offset)
      .all(),
    db(d1).select({ n: count() }).from(guardrailKeys).where(where).get(),
  ]);
  return { rows: rows as Assignment[], total: total?.n ?? 0 };
}

/** The guardrails one of the account's keys carries, oldest first (the console's key page). */
export async function guardrailsOfKey(d1: D1Database, accountId: string, keyHash: string): Promise<Guardrail[]> {
  return (
    await db(d1)
      .select({ g: guardrails })
      .from(guardrailKeys)
      .innerJoin(guardrails, eq(guardrails.id, guardrailKeys.guardrailId))
      .where(and(eq(guardrailKeys.accountId, accountId), eq(guardrailKeys.keyHash, keyHash)))
      .orderBy(asc(guardrails.createdAt))
      .all()
  ).map((r) => r.g);
}
