import { and, asc, eq, gt, lte } from "drizzle-orm";
import { db } from "../db/client";
import { apiKeys, memberInvites, members, type Member, type MemberInvite, type MemberRole } from "../db/schema";
import { randomId } from "../keys/api-key";
import { forgetKey } from "../keys/key-cache";

/** Whether a D1 error is a UNIQUE constraint's (an email taken, a token used). */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (/UNIQUE constraint failed/i.test(e.message)) return true;
  return false;
}

/** One of the account's members; undefined for another account's or a removed one. */
export async function findMember(d1: D1Database, accountId: string, memberId: string): Promise<Member | undefined> {
  return db(d1)
    .select()
    .from(members)
    .where(and(eq(members.id, memberId), eq(members.accountId, accountId)))
    .get();
}

/** The account's members, oldest first (an account has few: no paging). */
export async function listMembers(d1: D1Database, accountId: string): Promise<Member[]> {
  return db(d1).select().from(members).where(eq(members.accountId, accountId)).orderBy(asc(members.createdAt), asc(members.id)).all();
}

/** The account's live invitations, newest first; expired ones are pruned on the way. */
export async function listInvites(d1: D1Database, accountId: string): Promise<Omit<MemberInvite, "tokenHash">[]> {
  const now = Date.now();
  await db(d1)
    .delete(memberInvites)
    .where(and(eq(memberInvites.accountId, accountId), lte(memberInvites.expiresAt, now)));
  return db(d1)
    .select({
      id: memberInvites.id,
      accountId: memberInvites.accountId,
      email: memberInvites.email,
      role: memberInvites.role,
      invitedBy: memberInvites.invitedBy,
      createdAt: memberInvites.createdAt,
      expiresAt: memberInvites.expiresAt,
    })
    .from(memberInvites)
    .where(and(eq(memberInvites.accountId, accountId), gt(memberInvites.expiresAt, now)))
    .orderBy(asc(memberInvites.createdAt))
    .all();
}

/**
 * SQL true when removing or demoting member `?1` of account `?2` leaves the account an owner: the member is not
 * an owner, or another owner remains. Evaluated inside the statement (or batch) that changes the member, so two
 * requests at once cannot each take away one of the last two owners: D1 runs them one after the other.
 */
const KEEPS_AN_OWNER = `EXISTS (SELECT 1 FROM members m WHERE m.id = ?1 AND m.account_id = ?2 AND (m.role != 'owner' OR (SELECT count(*) FROM members o WHERE o.account_id = ?2 AND o.role = 'owner') > 1))`;

export type MemberChange = { ok: true; member: Member } | { ok: false; reason: "not-found" | "last-owner" };

/** Gives a member another role; refused when it would leave the account without an owner. */
export async function changeRole(d1: D1Database, accountId: string, memberId: string, role: MemberRole): Promise<MemberChange> {
  const row = await d1
    .prepare(`UPDATE members SET role = ?3 WHERE id = ?1 AND account_id = ?2 AND (?3 = 'owner' OR ${KEEPS_AN_OWNER}) RETURNING id`)
    .bind(memberId, accountId, role)
    .first<{ id: string }>();
  if (row) return { ok: true, member: (await findMember(d1, accountId, memberId))! };
  return { ok: false, reason: (await findMember(d1, accountId, memberId)) ? "last-owner" : "not-found" };
}

/**
 * Removes a member: their password and sessions go with them and their keys are disabled (one transaction, each
 * statement under the same guard); authentication refuses a key whose member is gone (401) even if re-enabled.
 */
export async function removeMember(d1: D1Database, accountId: string, memberId: string): Promise<MemberChange> {
  const member = await findMember(d1, accountId, memberId);
  if (!member) return { ok: false, reason: "not-found" };
  const [, , , removed] = await d1.batch<{ id: string }>([
    d1.prepare(`DELETE FROM credentials WHERE member_id = ?1 AND ${KEEPS_AN_OWNER}`).bind(memberId, accountId),
    d1.prepare(`DELETE FROM sessions WHERE member_id = ?1 AND ${KEEPS_AN_OWNER}`).bind(memberId, accountId),
    // Their keys show as disabled on the keys page (they could not work anyway: see findKeyByHash).
    d1
      .prepare(`UPDATE api_keys SET disabled = 1, updated_at = ?3 WHERE member_id = ?1 AND account_id = ?2 AND ${KEEPS_AN_OWNER}`)
      .bind(memberId, accountId, Date.now()),
    d1.prepare(`DELETE FROM members WHERE id = ?1 AND account_id = ?2 AND ${KEEPS_AN_OWNER} RETURNING id`).bind(memberId, accountId),
  ]);
  if (!removed?.results.length) return { ok: false, reason: "last-owner" };
  // This isolate forgets their keys at once; others within the key cache's staleness (docs/request-path.md).
  const keys = await db(d1).select({ hash: apiKeys.hash }).from(apiKeys).where(eq(apiKeys.memberId, memberId)).all();
  for (const k of keys) forgetKey(k.hash);
  return { ok: true, member };
}

/** The role a management key acts with now: its member's current one; the operator's keys (no member) as an owner; undefined when the member is gone. */
export async function currentRole(d1: D1Database, accountId: string, memberId: string | null): Promise<{ role: MemberRole; email: string | null } | undefined> {
  if (memberId === null) return { role: "owner", email: null };
  const m = await findMember(d1, accountId, memberId);
  return m ? { role: m.role, email: m.email } : undefined;
}

export const newMemberId = () => randomId("mem_", 12);
