import { and, asc, count, desc, eq, gt, inArray, isNull, lte, min, or, sql } from "drizzle-orm";
import { db } from "../db/client";
import { payments, stripeEvents, type Payment } from "../db/schema";

/** The processor payments go through now; rows of the retired local test-card flow say "test-card". */
export const STRIPE = "stripe";

/** How many checkouts one account may have open at once, and start in any hour (settings). */
export type CheckoutLimits = { maxOpen: number; maxPerHour: number };

export type Begun =
  | { kind: "payment"; payment: Payment }
  /** The id belongs to another account: never acted on. */
  | { kind: "not-yours" }
  /** The account has `open` unfinished checkouts already; the oldest expires at Stripe by `oldestAt` + the checkout's expiry. */
  | { kind: "too-many-open"; open: number; oldestAt: number }
  /** The account started `maxPerHour` checkouts in the last hour; the next may start at `retryAt` (Unix ms). */
  | { kind: "too-many-this-hour"; retryAt: number };

const HOUR_MS = 3_600_000;

/**
 * Records a payment as pending under the form's one-time id, or finds the one recorded before under
 * that id (so a resubmitted form resumes where it stopped). A new one is recorded only while the account
 * has fewer than `maxOpen` pending payments and started fewer than `maxPerHour` in the last hour: the
 * counts and the insert are one statement, so forms sent at once cannot pass the limits together.
 */
export async function beginPayment(
  d1: D1Database,
  p: { id: string; accountId: string; amountNano: number; feeNano: number; now: number },
  limits: CheckoutLimits,
): Promise<Begun> {
  const mine = (row: Payment): Begun => (row.accountId === p.accountId ? { kind: "payment", payment: row } : { kind: "not-yours" });
  const before = await findPayment(d1, p.id);
  if (before) return mine(before);
  const ofAccount = sql`SELECT COUNT(*) FROM ${payments} WHERE ${payments.accountId} = ${p.accountId}`;
  await db(d1).run(sql`
    INSERT INTO ${payments} (id, account_id, provider, amount_nano, fee_nano, status, created_at)
    SELECT ${p.id}, ${p.accountId}, ${STRIPE}, ${p.amountNano}, ${p.feeNano}, 'pending', ${p.now}
    WHERE (${ofAccount} AND ${payments.status} = 'pending') < ${limits.maxOpen}
      AND (${ofAccount} AND ${payments.createdAt} > ${p.now - HOUR_MS}) < ${limits.maxPerHour}
    ON CONFLICT (id) DO NOTHING`);
  const row = await findPayment(d1, p.id);
  if (row) return mine(row);
  const open = await db(d1)
    .select({ n: count(), oldest: min(payments.createdAt) })
    .from(payments)
    .where(and(eq(payments.accountId, p.accountId), eq(payments.status, "pending")))
    .get();
  if (open && open.n >= limits.maxOpen) return { kind: "too-many-open", open: open.n, oldestAt: open.oldest ?? p.now };
  const hour = await db(d1)
    .select({ oldest: min(payments.createdAt) })
    .from(payments)
    .where(and(eq(payments.accountId, p.accountId), gt(payments.createdAt, p.now - HOUR_MS)))
    .get();
  return { kind: "too-many-this-hour", retryAt: (hour?.oldest ?? p.now) + HOUR_MS };
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

/** Reconciliation looked at the payment now: the Cron Trigger looks at those it looked at least recently first. */
export async function recordLookedAt(d1: D1Database, id: string, now: number): Promise<void> {
  await db(d1).update(payments).set({ checkedAt: now }).where(eq(payments.id, id));
}

/** Every charged payment (granted by reconciliation), and Stripe's pending ones (looked up at Stripe). The payments table has no index on status: a scan, small beside `generations`. */
const unfinished = or(eq(payments.status, "charged"), and(eq(payments.status, "pending"), eq(payments.provider, STRIPE)));
/** Charged first (granting asks Stripe nothing), then those looked at least recently (never: first), oldest first. */
const charged = sql`${payments.status} = 'charged' DESC`;
const lookedAt = sql`coalesce(${payments.checkedAt}, 0)`;

/**
 * Unfinished payments of every account for one Cron Trigger run, at most `limit`, at most `perAccount`
 * of any one account — so no account's open checkouts fill a run — those looked at least recently
 * first: every account's first before any account's second, and in turn every payment is looked at.
 */
export async function unfinishedFairly(d1: D1Database, opts: { limit: number; perAccount: number }): Promise<Payment[]> {
  const d = db(d1);
  const ranked = d
    .select({
      id: payments.id,
      rank: sql<number>`row_number() OVER (PARTITION BY ${payments.accountId} ORDER BY ${charged}, ${lookedAt}, ${payments.createdAt})`.as("rank"),
    })
    .from(payments)
    .where(unfinished)
    .as("ranked");
  const rows = await d
    .select({ payment: payments })
    .from(payments)
    .innerJoin(ranked, eq(payments.id, ranked.id))
    .where(sql`${ranked.rank} <= ${opts.perAccount}`)
    .orderBy(charged, lookedAt, sql`${ranked.rank}`, asc(payments.createdAt))
    .limit(opts.limit)
    .all();
  return rows.map((r) => r.payment);
}

/**
 * One account's unfinished payments for its credits page, at most `limit`: the one it came back from
 * (`first`) first, then as the cron orders them, leaving out pending ones looked at since `lookedSince`
 * (a reload asks Stripe nothing again; the cron and the next minutes' pages ask).
 */
export async function unfinishedOf(d1: D1Database, accountId: string, opts: { limit: number; first?: string; lookedSince: number }): Promise<Payment[]> {
  const first = opts.first ?? "";
  const due = or(eq(payments.id, first), eq(payments.status, "charged"), sql`${lookedAt} < ${opts.lookedSince}`);
  return db(d1)
    .select()
    .from(payments)
    .where(and(eq(payments.accountId, accountId), unfinished, due))
    .orderBy(sql`${payments.id} = ${first} DESC`, charged, lookedAt, asc(payments.createdAt))
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
