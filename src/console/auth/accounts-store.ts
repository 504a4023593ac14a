import { and, eq, ne } from "drizzle-orm";
import { db } from "../../db/client";
import { accounts, credentials, sessions } from "../../db/schema";
import { randomId } from "../../keys/api-key";
import type { PasswordHash } from "./password";

/** The account and password hash for an email; undefined when there is no account or it has no password. */
export async function findCredential(d1: D1Database, email: string): Promise<{ accountId: string; hash: PasswordHash } | undefined> {
  const row = await db(d1)
    .select({
      accountId: accounts.id,
      algorithm: credentials.algorithm,
      iterations: credentials.iterations,
      salt: credentials.salt,
      passwordHash: credentials.passwordHash,
    })
    .from(accounts)
    .innerJoin(credentials, eq(credentials.accountId, accounts.id))
    .where(eq(accounts.email, email))
    .get();
  if (!row) return undefined;
  const { accountId, ...hash } = row;
  return { accountId, hash };
}

/**
 * Creates an account and its password in one D1 transaction. Returns the new account id, or
 * undefined when the email is taken (by a console user or an account the operator created).
 */
export async function createAccountWithPassword(d1: D1Database, email: string, hash: PasswordHash): Promise<string | undefined> {
  const id = randomId("acct_", 12);
  const now = Date.now();
  const d = db(d1);
  try {
    await d.batch([d.insert(accounts).values({ id, email, createdAt: now }), d.insert(credentials).values({ accountId: id, ...hash, updatedAt: now })]);
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
  return id;
}

function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (/UNIQUE constraint failed/i.test(e.message)) return true;
  return false;
}

/** The password hash of an account (by id); undefined when it has none (an account the operator made). */
export async function credentialOf(d1: D1Database, accountId: string): Promise<PasswordHash | undefined> {
  return db(d1)
    .select({ algorithm: credentials.algorithm, iterations: credentials.iterations, salt: credentials.salt, passwordHash: credentials.passwordHash })
    .from(credentials)
    .where(eq(credentials.accountId, accountId))
    .get();
}

/** Replaces an account's password and ends its every session but `keepSessionHash`, in one D1 transaction. */
export async function changePassword(d1: D1Database, accountId: string, hash: PasswordHash, keepSessionHash: string): Promise<void> {
  const d = db(d1);
  await d.batch([
    d
      .update(credentials)
      .set({ ...hash, updatedAt: Date.now() })
      .where(eq(credentials.accountId, accountId)),
    d.delete(sessions).where(and(eq(sessions.accountId, accountId), ne(sessions.tokenHash, keepSessionHash))),
  ]);
}

/**
 * Stores the first password of an account that has none (one the operator made) and ends its every session
 * but `keepSessionHash`, in one D1 transaction. False when the account has a password already (set meanwhile).
 */
export async function setFirstPassword(d1: D1Database, accountId: string, hash: PasswordHash, keepSessionHash: string): Promise<boolean> {
  const d = db(d1);
  const [inserted] = await d.batch([
    d
      .insert(credentials)
      .values({ accountId, ...hash, updatedAt: Date.now() })
      .onConflictDoNothing()
      .returning({ accountId: credentials.accountId }),
    d.delete(sessions).where(and(eq(sessions.accountId, accountId), ne(sessions.tokenHash, keepSessionHash))),
  ]);
  return inserted.length === 1;
}
