import { count, desc, eq, lt } from "drizzle-orm";
import { db } from "../db/client";
import { auditEvents, type AuditEvent } from "../db/schema";
import { logError } from "../log-error";

/** Who did an administrative action, and how: a console session or a management key (by its masked label). */
export type Actor = { accountId: string; memberId: string | null; email: string | null; via: "session" | `key:${string}` };

/** The audit log's page size (console and `GET /api/v1/audit`). */
export const AUDIT_PAGE = 50;

/**
 * Records one administrative action (keys, guardrails, presets, members, invitations, credits). Written after
 * the action succeeded; a failure to write is logged, never turned into a failure of the action it describes.
 */
export async function audit(d1: D1Database, actor: Actor, action: string, target: string | null, details?: Record<string, unknown>): Promise<void> {
  try {
    await db(d1)
      .insert(auditEvents)
      .values({
        accountId: actor.accountId,
        at: Date.now(),
        actorMemberId: actor.memberId,
        actorEmail: actor.email,
        via: actor.via,
        action,
        target,
        details: details ? small(JSON.stringify(details)) : null,
      });
  } catch (err) {
    logError("audit write failed", err);
  }
}

/** Details stay small: anything longer than this is replaced by a note that it was (the action and target remain). */
const small = (json: string) => (json.length <= 2000 ? json : JSON.stringify({ truncated: true }));

/** One page of the account's audit log, newest first, with the total. */
export async function auditPage(d1: D1Database, accountId: string, offset: number, limit = AUDIT_PAGE): Promise<{ rows: AuditEvent[]; total: number }> {
  const d = db(d1);
  const [rows, total] = await Promise.all([
    d
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.accountId, accountId))
      .orderBy(desc(auditEvents.at), desc(auditEvents.id))
      .limit(limit)
      .offset(offset)
      .all(),
    d.select({ n: count() }).from(auditEvents).where(eq(auditEvents.accountId, accountId)).get(),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** The Cron Trigger's retention: deletes entries older than `keepDays` (every account's). */
export async function pruneAudit(d1: D1Database, keepDays: number, now = Date.now()): Promise<void> {
  await db(d1)
    .delete(auditEvents)
    .where(lt(auditEvents.at, now - keepDays * 86_400_000));
}
