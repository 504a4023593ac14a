import { and, asc, eq, ne } from "drizzle-orm";
import { db } from "../../db/client";
import { accounts, credentials, members, sessions, type MemberRole } from "../../db/schema";
import { randomId } from "../../keys/api-key";
import { isUniqueViolation } from "../../members/member-store";
import type { PasswordHash } from "./password";

/** The member, account and password hash for an email; undefined when no member has it or it has no password. */
export async function findCredential(
  d1: D1Database,
  email: string,
): Promise<{ memberId: string; accountId: string; role: MemberRole; hash: PasswordHash } | undefined> {
  const row = await db(d1)
    .select({
      memberId: members.id,
      accountId: members.accountId,
      role: members.role,
      algorithm: credentials.algorithm,
      iterations: credentials.iterations,
      salt: credentials.salt,
      passwordHash: credentials.passwordHash,
    })
    .from(members)
    .innerJoin(credentials, eq(credentials.memberId, members.id))
    .where(eq(members.email, email))
    .get();
  if (!row) return undefined;
  const { memberId, accountId, role, ...hash } = row;
  return { memberId, accountId, role, hash };
}

/**
 * Creates an account, its first member (the owner, with the account's email) and the owner's password in
 * one D1 transaction. Returns the new ids, or undefined when the email is taken (by an account or a member).
 */
export async function createAccountWithPassword(
  d1: D1Database,
  email: string,
  hash: PasswordHash,
): Promise<{ accountId: string; memberId: string } | undefined> {
  const accountId = randomId("acct_", 12);
  const memberId = randomId("mem_", 12);
  const now = Date.now();
  const d = db(d1);
  try {
    await d.batch([
      d.insert(accounts).values({ id: accountId, email, createdAt: now }),
      d.insert(members).values({ id: memberId, accountId, email, role: "owner", createdAt: now }),
      d.insert(credentials).values({ memberId, ...hash, updatedAt: now }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
  return { accountId, memberId };
}

/**
 * The member a one-time sign-in link for an account signs in (links name accounts: `npm run admin -- sign-in-link`):
 * the owner with the account's email, else its oldest owner.
 */
export async function linkMemberOf(d1: D1Database, accountId: string): Promise<string | undefined> {
  const owners = await db(d1)
    .select({ id: members.id, email: members.email, accountEmail: accounts.email })
    .from(members)
    .innerJoin(accounts, eq(accounts.id, members.accountId))
    .where(and(eq(members.accountId, accountId), eq(members.role, "owner")))
    .orderBy(asc(members.createdAt), asc(members.id))
    .all();
  return (owners.find((o) => o.email === o.accountEmail) ?? owners[0])?.id;
}

/** The password hash of a member; undefined when it has none (the owner of an account the operator made). */
export async function credentialOf(d1: D1Database, memberId: string): Promise<PasswordHash | undefined> {
  return db(d1)
    .select({ algorithm: credentials.algorithm, iterations: credentials.iterations, salt: credentials.salt, passwordHash: credentials.passwordHash })
    .from(credentials)
    .where(eq(credentials.memberId, memberId))
    .get();
}

/** Replaces a member's password and ends their every session but `keepSessionHash`, in one D1 transaction. */
export async function changePassword(d1: D1Database, memberId: string, hash: PasswordHash, keepSessionHash: string): Promise<void> {
  const d = db(d1);
  await d.batch([
    d
      .update(credentials)
      .set({ ...hash, updatedAt: Date.now() })
      .where(eq(credentials.memberId, memberId)),
    d.delete(sessions).where(and(eq(sessions.memberId, memberId), ne(sessions.tokenHash, keepSessionHash))),
  ]);
}

/**
 * Stores the first password of a member who has none (the owner of an account the operator made) and ends
 * their every session but `keepSessionHash`, in one D1 transaction. False when they have a password already.
 */
export async function setFirstPassword(d1: D1Database, memberId: string, hash: PasswordHash, keepSessionHash: string): Promise<boolean> {
  const d = db(d1);
  const [inserted] = await d.batch([
    d
      .insert(credentials)
      .values({ memberId, ...hash, updatedAt: Date.now() })
      .onConflictDoNothing()
      .returning({ memberId: credentials.memberId }),
    d.delete(sessions).where(and(eq(sessions.memberId, memberId), ne(sessions.tokenHash, keepSessionHash))),
  ]);
  return inserted.length === 1;
}
