import type { Env } from "../env";
import type { Payment } from "../db/schema";
import { logError } from "../log-error";
import { settings } from "../settings";
import { applySession } from "./apply-session";
import { grantCharged, ledgerMoves, type PaymentDeps } from "./grant-payment";
import { recordFailed, unfinishedPayments } from "./payments-store";
import { stripeAccess } from "./stripe-client";

export type ReconcileOptions = { accountId?: string; limit: number; abandonAfterMs: number };
export type ReconcileReport = { completed: number; abandoned: number; waiting: number; errors: number };

/**
 * Finishes payments a lost webhook, a crash or a lost reply left unfinished, oldest first, at most
 * `limit`: a charged one is granted (once: the grant id is the payment's); a pending one is brought up
 * to what Stripe's API says of its Checkout Session — paid: granted; expired: failed; open past its
 * expiry: expired at Stripe, then failed. One whose session was never made fails after `abandonAfterMs`
 * (its person was never sent to pay). Without Stripe connected, charged payments are still granted.
 */
export async function reconcilePayments(
  deps: Omit<PaymentDeps, "stripe"> & { stripe: PaymentDeps["stripe"] | null },
  opts: ReconcileOptions,
): Promise<ReconcileReport> {
  const report: ReconcileReport = { completed: 0, abandoned: 0, waiting: 0, errors: 0 };
  for (const payment of await unfinishedPayments(deps.d1, opts)) {
    try {
      report[await reconcileOne(deps, payment, opts)]++;
    } catch (err) {
      report.errors++;
      logError("payment reconciliation failed", err, { payment: payment.id });
    }
  }
  return report;
}

async function reconcileOne(
  deps: Omit<PaymentDeps, "stripe"> & { stripe: PaymentDeps["stripe"] | null },
  payment: Payment,
  opts: ReconcileOptions,
): Promise<"completed" | "abandoned" | "waiting"> {
  if (payment.status === "charged") {
    await grantCharged(deps, payment);
    return "completed";
  }
  const { stripe } = deps;
  if (!stripe) return "waiting";
  if (!payment.checkoutSession) {
    if (deps.now() - payment.createdAt < opts.abandonAfterMs) return "waiting";
    await recordFailed(deps.d1, payment.accountId, payment.id);
    return "abandoned";
  }
  let session = await stripe.checkout.sessions.retrieve(payment.checkoutSession);
  if (session.status === "open" && session.expires_at * 1000 <= deps.now()) session = await stripe.checkout.sessions.expire(session.id);
  const applied = await applySession({ ...deps, stripe }, session);
  return applied.done === "granted" ? "completed" : applied.done === "failed" ? "abandoned" : "waiting";
}

/** The payment steps with the Worker's bindings and settings; null `stripe` when payments are off. */
export async function paymentDeps(env: Env): Promise<Omit<PaymentDeps, "stripe"> & { stripe: PaymentDeps["stripe"] | null }> {
  return { d1: env.DB, stripe: (await stripeAccess(env))?.stripe ?? null, ...ledgerMoves(env), now: Date.now };
}

/** Reconciles with the Worker's bindings and vars: every account's payments (cron), or one account's (its credits page). */
export async function reconcileFromEnv(env: Env, scope: { accountId?: string } = {}): Promise<ReconcileReport> {
  const s = settings(env);
  return reconcilePayments(await paymentDeps(env), { ...scope, limit: s.PAYMENTS_RECONCILE_BATCH, abandonAfterMs: s.PAYMENT_ABANDON_AFTER_MS });
}
