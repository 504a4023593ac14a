import { and, asc, desc, eq, inArray, or } from "drizzle-orm";
import { db } from "../db/client";
import { payments, type Payment } from "../db/schema";

/**
 * Records a payment as pending under the form's one-time id, or finds the one recorded before under
 * that id. Returns the row as it stands (so a resubmitted form resumes where it stopped), or undefined
 * when the id belongs to another account (never acted on).
 */
export async function beginPayment(d1: D1Database, p: { id: string; accountId: string; provider: string; amountNano: number }): Promise<Payment | undefined> {
  const d = db(d1);
  await d
    .insert(payments)
    .values({ ...p, status: "pending", reference: null, createdAt: Date.now() })
    .onConflictDoNothing();
  return d
    .select()
    .from(payments)
    .where(and(eq(payments.id, p.id), eq(payments.accountId, p.accountId)))
    .get();
}

/** The provider took the money: pending (or given up on, should the charge land late) → charged. */
export async function recordCharged(d1: D1Database, accountId: string, id: string, reference: string): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ status: "charged", reference })
    .where(and(eq(payments.id, id), eq(payments.accountId, accountId), inArray(payments.status, ["pending", "failed"])));
}

/** The ledger granted it: charged → succeeded. */
export async function recordSucceeded(d1: D1Database, accountId: string, id: string): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ status: "succeeded" })
    .where(and(eq(payments.id, id), eq(payments.accountId, accountId), eq(payments.status, "charged")));
}

/** The provider refused it (nothing charged): pending → declined. */
export async function recordDeclined(d1: D1Database, accountId: string, id: string): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ status: "declined" })
    .where(and(eq(payments.id, id), eq(payments.accountId, accountId), eq(payments.status, "pending")));
}

/** Never charged, and too old to be under way: pending → failed. */
export async function recordAbandoned(d1: D1Database, accountId: string, id: string): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ status: "failed" })
    .where(and(eq(payments.id, id), eq(payments.accountId, accountId), eq(payments.status, "pending")));
}

/**
 * Payments not finished, oldest first, at most `limit`: every charged one, and the pending ones of the
 * processors in `providers` (a pending payment of a processor no longer connected cannot be looked up,
 * and must not hold the batch's places). Of one account, or of all accounts (a scan of the payments
 * table, which has no index on status; it is small beside the records).
 */
export async function unfinishedPayments(d1: D1Database, opts: { accountId?: string; providers: readonly string[]; limit: number }): Promise<Payment[]> {
  const charged = eq(payments.status, "charged");
  const unfinished = opts.providers.length === 0 ? charged : or(charged, and(eq(payments.status, "pending"), inArray(payments.provider, [...opts.providers])));
  return db(d1)
    .select()
    .from(payments)
    .where(opts.accountId === undefined ? unfinished : and(eq(payments.accountId, opts.accountId), unfinished))
    .orderBy(asc(payments.createdAt))
    .limit(opts.limit)
    .all();
}

export async function recentPayments(d1: D1Database, accountId: string, limit = 10): Promise<Payment[]> {
  return db(d1).select().from(payments).where(eq(payments.accountId, accountId)).orderBy(desc(payments.createdAt)).limit(limit).all();
}
