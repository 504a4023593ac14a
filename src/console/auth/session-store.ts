import { and, eq, gt, lte } from "drizzle-orm";
import { db } from "../../db/client";
import { accounts, sessions } from "../../db/schema";
import { randomToken, sha256Hex } from "../http/encoding";

/** A session lasts this long from sign-in; signing out ends it at once. */
export const SESSION_TTL_MS = 14 * 24 * 3600_000;

/** Starts a session for the account and returns its token (for the cookie); only the token's hash is stored. */
export async function createSession(d1: D1Database, accountId: string): Promise<string> {
  const token = randomToken();
  const now = Date.now();
  const d = db(d1);
  await d.batch([
    d.delete(sessions).where(and(eq(sessions.accountId, accountId), lte(sessions.expiresAt, now))),
    d.insert(sessions).values({ tokenHash: await sha256Hex(token), accountId, createdAt: now, expiresAt: now + SESSION_TTL_MS }),
  ]);
  return token;
}

/** The live session a token names, with its account's email; undefined when unknown or expired. */
export async function findSession(d1: D1Database, token: string): Promise<{ accountId: string; email: string } | undefined> {
  return db(d1)
    .select({ accountId: sessions.accountId, email: accounts.email })
    .from(sessions)
    .innerJoin(accounts, eq(accounts.id, sessions.accountId))
    .where(and(eq(sessions.tokenHash, await sha256Hex(token)), gt(sessions.expiresAt, Date.now())))
    .get();
}

export async function deleteSession(d1: D1Database, token: string): Promise<void> {
  await db(d1)
    .delete(sessions)
    .where(eq(sessions.tokenHash, await sha256Hex(token)));
}
