import { and, asc, desc, eq, inArray, isNull, lte, or } from "drizzle-orm";
import { db } from "../db/client";
import { payments, stripeEvents, type Payment } from "../db/schema";

/** The processor payments go through now; rows of the retired local test-card flow say "test-card". */
export const STRIPE = "stripe";

/**
 * Records a payment as pending under the form's one-time id, or finds the one recorded before under
 * that id. Returns the row as it stands (so a resubmitted form resumes where it stopped), or undefined
 * when the id belongs to another account (never acted on).
 */
export async function beginPayment(
  d1: D1Database,
  p: { id: string; accountId: string; amountNano: number; feeNano: number; now: number },
): Promise<Payment | undefined> {
  const d = db(d1);
  await d
    .insert(payments)
    .values({ id: p.id, accountId: p.accountId, provider: STRIPE, amountNano: p.amountNano, feeNano: p.feeNano, status: "pending", createdAt: p.now })
    .onConflictDoNothing();
  return findPayment(d1, p.id, p.accountId);
}

/** One payment by id, of one account; or of any account (a signed webhook says which, and is checked against the row). */
export async function findPayment(d1: D1Database, id: string, accountId?: string): Promise<Payment | undefined> {
  const where = accountId === undefined ? eq(payments.id, id) : and(eq(payments.id, id), eq(payments.accountId, accountId));
  return db(d1).select().from(payments).where(where).get();
}

/** The payment Stripe charged under a PaymentIntent. */
export async function findPaymentByReference(d1: D1Database, paymentIntent: string): Promise<Payment | undefined> {
  return db(d1).select().from(payments).where(eq(payments.reference, paymentIntent)).get();
}

/** The Checkout Session made for a payment; set once (a resubmitted form finds it and goes back to it). */
export async function recordCheckoutSession(d1: D1Database, accountId: string, id: string, session: string): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ checkoutSession: session })
    .where(and(eq(payments.id, id), eq(payments.accountId, accountId), isNull(payments.checkoutSession)));
}

/** Stripe took the money: pending (or given up on, should the payment land late) → charged, with its PaymentIntent. */
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

/** Never paid (its checkout expired or was cancelled, or was never made): pending → failed. */
export async function recordFailed(d1: D1Database, accountId: string, id: string): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ status: "failed" })
    .where(and(eq(payments.id, id), eq(payments.accountId, accountId), eq(payments.status, "pending")));
}

/**
 * What the charge's state read at `observedAt` takes back of the payment's credits, for refunds and for
 * withheld disputes (the ledger reversal is their sum); a reading older than the stored one is not written.
 */
export async function recordReversal(d1: D1Database, id: string, r: { refundedNano: number; disputedNano: number; observedAt: number }): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ refundedNano: r.refundedNano, disputedNano: r.disputedNano, reversalReadAt: r.observedAt })
    .where(and(eq(payments.id, id), lte(payments.reversalReadAt, r.observedAt)));
}

/**
 * Payments not finished, oldest first, at most `limit`: every charged one (granted by reconciliation),
 * and Stripe's pending ones (looked up at Stripe). Of one account, or of all accounts (a scan of the
 * payments table, which has no index on status; it is small beside the records).
 */
export async function unfinishedPayments(d1: D1Database, opts: { accountId?: string; limit: number }): Promise<Payment[]> {
  const unfinished = or(eq(payments.status, "charged"), and(eq(payments.status, "pending"), eq(payments.provider, STRIPE)));
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

/** Remembers a signed event (its first delivery) and what it did: the audit of what Stripe told us. */
export async function recordStripeEvent(
  d1: D1Database,
  e: { id: string; type: string; paymentId: string | null; outcome: string; now: number },
): Promise<void> {
  await db(d1).insert(stripeEvents).values({ id: e.id, type: e.type, paymentId: e.paymentId, outcome: e.outcome, receivedAt: e.now }).onConflictDoNothing();
}
