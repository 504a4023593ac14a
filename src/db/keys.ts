import { eq } from "drizzle-orm";
import { db } from "./client";
import { accounts, apiKeys, type ApiKey } from "./schema";
import { generateApiKey, hashApiKey, maskApiKey } from "../keys/api-key";

export async function findKeyByHash(d1: D1Database, hash: string): Promise<ApiKey | undefined> {
  return db(d1).select().from(apiKeys).where(eq(apiKeys.hash, hash)).get();
}

export type CreatedKey = { key: string; record: ApiKey };

/** Creates a key for an account; the plaintext is returned here and nowhere else. */
export async function createKey(d1: D1Database, accountId: string, name: string, limitNano: number | null): Promise<CreatedKey> {
  const key = generateApiKey();
  const record: ApiKey = {
    hash: await hashApiKey(key),
    accountId,
    name,
    label: maskApiKey(key),
    disabled: false,
    limitNano,
    createdAt: Date.now(),
  };
  await db(d1).insert(apiKeys).values(record);
  return { key, record };
}

/** Sets a key's disabled flag; returns the updated key, or undefined when there is none with that hash. */
export async function setKeyDisabled(d1: D1Database, hash: string, disabled: boolean): Promise<ApiKey | undefined> {
  return db(d1).update(apiKeys).set({ disabled }).where(eq(apiKeys.hash, hash)).returning().get();
}

export async function findAccount(d1: D1Database, idOrEmail: string) {
  const column = idOrEmail.includes("@") ? accounts.email : accounts.id;
  return db(d1).select().from(accounts).where(eq(column, idOrEmail)).get();
}
