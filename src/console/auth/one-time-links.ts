import { and, eq, lte } from "drizzle-orm";
import { db } from "../../db/client";
import { oneTimeLinks } from "../../db/schema";
import { randomToken, sha256Hex } from "../http/encoding";

/**
 * One-time console links (`one_time_links`): a sign-in link for an account, or an invitation to sign up.
 * The token is random (32 bytes), shown once in the link's URL fragment (browsers never send a fragment
 * to a server, so it reaches no log) and stored only as its SHA-256 hash. Redeeming deletes the row in the
 * same statement that reads it: two redeemers of one link cannot both win.
 */
export type LinkKind = "sign-in" | "invite";

/** The console path a link opens; the token follows as its fragment. */
export const LINK_PATH: Record<LinkKind, string> = { "sign-in": "/sign-in/link", invite: "/sign-up" };

/** A token as links carry it (randomToken's 43 URL-safe characters). */
export const LINK_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Makes a link and returns its token. A new sign-in link replaces the account's earlier ones (only the
 * newest works); expired links of either kind are pruned on the way.
 */
export async function createLink(d1: D1Database, kind: LinkKind, accountId: string | null, ttlMs: number): Promise<{ token: string; expiresAt: number }> {
  const token = randomToken();
  const now = Date.now();
  const d = db(d1);
  const expiresAt = now + ttlMs;
  await d.batch([
    d.delete(oneTimeLinks).where(lte(oneTimeLinks.expiresAt, now)),
    ...(accountId === null ? [] : [d.delete(oneTimeLinks).where(and(eq(oneTimeLinks.kind, kind), eq(oneTimeLinks.accountId, accountId)))]),
    d.insert(oneTimeLinks).values({ tokenHash: await sha256Hex(token), kind, accountId, createdAt: now, expiresAt }),
  ]);
  return { token, expiresAt };
}

/** Uses a link up: its row (deleted now, whatever its age), or undefined when the token names no live link of this kind. */
export async function redeemLink(d1: D1Database, kind: LinkKind, token: string): Promise<{ accountId: string | null; expiresAt: number } | undefined> {
  if (!LINK_TOKEN.test(token)) return undefined;
  const [row] = await db(d1)
    .delete(oneTimeLinks)
    .where(and(eq(oneTimeLinks.tokenHash, await sha256Hex(token)), eq(oneTimeLinks.kind, kind)))
    .returning({ accountId: oneTimeLinks.accountId, expiresAt: oneTimeLinks.expiresAt });
  return row && row.expiresAt > Date.now() ? row : undefined;
}

/** Puts an invitation back, unused, when the sign-up it was redeemed for did not create an account (the email was taken). */
export async function restoreInvite(d1: D1Database, token: string, expiresAt: number): Promise<void> {
  await db(d1)
    .insert(oneTimeLinks)
    .values({ tokenHash: await sha256Hex(token), kind: "invite", accountId: null, createdAt: Date.now(), expiresAt })
    .onConflictDoNothing();
}
