import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Payments through Stripe and the webhook events acted on.

/**
 * One "add credits" purchase: a Stripe Checkout Session for the credits plus the platform fee. The ledger
 * grant (`payment:<id>`) is the money; this row is the audit trail and the link to Stripe's objects.
 */
export const payments = sqliteTable(
  "payments",
  {
    id: text("id").primaryKey(), // "pay_<random>": the form's one-time token, also the Checkout Session's idempotency key
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    provider: text("provider").notNull(), // "stripe" (older rows: "test-card", the retired local flow)
    amountNano: integer("amount_nano").notNull(), // the credits bought, granted on payment
    feeNano: integer("fee_nano").notNull().default(0), // the platform fee charged beside them, never granted
    // pending (checkout open) → charged (Stripe took the money) → succeeded (the ledger granted it); or failed (expired, abandoned) / declined.
    status: text("status", { enum: ["pending", "charged", "succeeded", "declined", "failed"] }).notNull(),
    reference: text("reference"), // Stripe's PaymentIntent id once paid ("pi_…"); never card data
    checkoutSession: text("checkout_session"), // Stripe's Checkout Session id ("cs_…")
    refundedNano: integer("refunded_nano").notNull().default(0), // credits taken back for refunds (docs/payments.md)
    disputedNano: integer("disputed_nano").notNull().default(0), // credits withheld for open or lost disputes
    // When Stripe's state of the charge behind refunded_nano/disputed_nano was read (Unix ms; 0 = never): an older reading never overwrites them.
    reversalReadAt: integer("reversal_read_at").notNull().default(0),
    // When reconciliation last asked Stripe about this payment (Unix ms; null = never): the cron asks the least recently asked first.
    checkedAt: integer("checked_at"),
    createdAt: integer("created_at").notNull(), // Unix ms
  },
  (t) => [
    index("payments_account_created").on(t.accountId, t.createdAt),
    uniqueIndex("payments_checkout_session").on(t.checkoutSession),
    index("payments_reference").on(t.reference),
  ],
);

/** Every signed Stripe webhook event acted on or ignored, once per event id: the audit of what Stripe told us. */
export const stripeEvents = sqliteTable(
  "stripe_events",
  {
    id: text("id").primaryKey(), // "evt_…"
    type: text("type").notNull(),
    paymentId: text("payment_id"), // the payment it concerned, when one was found
    outcome: text("outcome").notNull(), // what it did: "granted", "refund recorded", "ignored: …"
    receivedAt: integer("received_at").notNull(), // Unix ms of the first delivery
  },
  (t) => [index("stripe_events_payment").on(t.paymentId)],
);
