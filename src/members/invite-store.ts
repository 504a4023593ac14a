import { and, eq, lte } from "drizzle-orm";
import { db } from "../db/client";
import { credentials, memberInvites, members, type MemberRole } from "../db/schema";
import { randomId } from "../keys/api-key";
import { sha256Hex } from "../keys/sha256";
import { isUniqueViolation, newMemberId } from "./member-store";

/**
 * Invitations to join an account (`member_invites`): the link's token is random (32 bytes, base64url), shown
 * once in the link's fragment (browsers never send it to a server) and stored only as its SHA-256 hash.
 * Accepting deletes the row in the statement that reads it, so two acceptances of one link cannot both win.
 */
export const INVITE_PATH = "/join";

/** A token as links carry it (43 URL-safe characters). */
export const INVITE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

function randomToken(): string {
  let bin = "";
  for (const b of crypto.getRandomValues(new Uint8Array(32))) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Makes an invitation and returns its token (its only copy). Expired invitations of the account are pruned on the way. */
export async function createInvite(
  d1: D1Database,
  invite: { accountId: string; email: string; role: MemberRole; invitedBy: string },
  ttlMs: number,
): Promise<{ id: string; token: string; expiresAt: number }> {
  const token = randomToken();
  const now = Date.now();
  const id = randomId("inv_", 8);
  const d = db(d1);
  await d.batch([
    d.delete(memberInvites).where(and(eq(memberInvites.accountId, invite.accountId), lte(memberInvites.expiresAt, now))),
    d.insert(memberInvites).values({ ...invite, id, tokenHash: sha256Hex(token), createdAt: now, expiresAt: now + ttlMs }),
  ]);
  return { id, token, expiresAt: now + ttlMs };
}

/** Withdraws one of the account's invitations; false when there is none with that id. */
export async function revokeInvite(d1: D1Database, accountId: string, id: string): Promise<boolean> {
  const rows = await db(d1)
    .delete(memberInvites)
    .where(and(eq(memberInvites.id, id), eq(memberInvites.accountId, accountId)))
    .returning({ id: memberInvites.id });
  return rows.length === 1;
}

/** The live invitation a token names (to show whom it invites), without using it up. */
export async function peekInvite(d1: D1Database, token: string) {
  if (!INVITE_TOKEN.test(token)) return undefined;
  const row = await db(d1)
    .select({ accountId: memberInvites.accountId, email: memberInvites.email, role: memberInvites.role, expiresAt: memberInvites.expiresAt })
    .from(memberInvites)
    .where(eq(memberInvites.tokenHash, sha256Hex(token)))
    .get();
  return row && row.expiresAt > Date.now() ? row : undefined;
}

export type Accepted = { ok: true; accountId: string; memberId: string; email: string; role: MemberRole } | { ok: false; reason: "invalid" | "email-taken" };

/**
 * Accepts an invitation: uses it up, then makes the member with the invited email and role and their password,
 * in one transaction. An invitation whose email has meanwhile become another member's is used up all the same
 * (a new one is needed), and says so.
 */
export async function acceptInvite(
  d1: D1Database,
  token: string,
  hash: { algorithm: string; iterations: number; salt: string; passwordHash: string },
): Promise<Accepted> {
  if (!INVITE_TOKEN.test(token)) return { ok: false, reason: "invalid" };
  const d = db(d1);
  const [row] = await d
    .delete(memberInvites)
    .where(eq(memberInvites.tokenHash, sha256Hex(token)))
    .returning();
  if (!row || row.expiresAt <= Date.now()) return { ok: false, reason: "invalid" };
  const memberId = newMemberId();
  const now = Date.now();
  try {
    await d.batch([
      d.insert(members).values({ id: memberId, accountId: row.accountId, email: row.email, role: row.role, createdAt: now }),
      d.insert(credentials).values({ memberId, ...hash, updatedAt: now }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: "email-taken" };
    throw err;
  }
  return { ok: true, accountId: row.accountId, memberId, email: row.email, role: row.role };
}
