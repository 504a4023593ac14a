import { and, eq, gt, lte } from "drizzle-orm";
import { db } from "../../db/client";
import { members, sessions, type MemberRole } from "../../db/schema";
import { randomToken, sha256Hex } from "../http/encoding";

/** A session lasts this long from sign-in; signing out ends it at once. */
export const SESSION_TTL_MS = 14 * 24 * 3600_000;

/** Starts a session for a member and returns its token (for the cookie); only the token's hash is stored. */
export async function createSession(d1: D1Database, member: { accountId: string; memberId: string }): Promise<string> {
  const token = randomToken();
  const now = Date.now();
  const d = db(d1);
  await d.batch([
    d.delete(sessions).where(and(eq(sessions.memberId, member.memberId), lte(sessions.expiresAt, now))),
    d.insert(sessions).values({ tokenHash: await sha256Hex(token), ...member, createdAt: now, expiresAt: now + SESSION_TTL_MS }),
  ]);
  return token;
}

/**
 * The live session a token names, with its member's email and CURRENT role (read with the session at every
 * request, so a role change applies at the next page); undefined when unknown, expired or the member removed.
 */
export async function findSession(
  d1: D1Database,
  token: string,
): Promise<{ accountId: string; memberId: string; email: string; role: MemberRole } | undefined> {
  return db(d1)
    .select({ accountId: members.accountId, memberId: members.id, email: members.email, role: members.role })
    .from(sessions)
    .innerJoin(members, eq(members.id, sessions.memberId))
    .where(and(eq(sessions.tokenHash, await sha256Hex(token)), gt(sessions.expiresAt, Date.now())))
    .get();
}

export async function deleteSession(d1: D1Database, token: string): Promise<void> {
  await db(d1)
    .delete(sessions)
    .where(eq(sessions.tokenHash, await sha256Hex(token)));
}
