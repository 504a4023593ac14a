import type { Env } from "../env";
import type { Payment } from "../db/schema";
import { logError } from "../log-error";
import { settings } from "../settings";
import { applySession } from "./apply-session";
import { grantCharged, paymentDeps, type MaybeConnectedDeps } from "./grant-payment";
import { recordFailed, unfinishedPayments } from "./payments-store";

export type ReconcileOptions = { accountId?: string; limit: number; abandonAfterMs: number };
type ReconcileReport = { completed: number; abandoned: number; waiting: number; errors: number };

/**
 * Finishes payments a lost webhook, a crash or a lost reply left unfinished, oldest first, at most
 * `limit`: a charged one is granted (once: the grant id is the payment's); a pending one is brought up
 * to what Stripe's API says of its Checkout Session — paid: granted; expired: failed; open past its
 * expiry: expired at Stripe, then failed. One whose session was never made fails after `abandonAfterMs`
 * (its person was never sent to pay). Without Stripe connected, charged payments are still granted.
 */
async function reconcilePayments(deps: MaybeConnectedDeps, opts: ReconcileOptions): Promise<ReconcileReport> {
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

async function reconcileOne(deps: MaybeConnectedDeps, payment: Payment, opts: ReconcileOptions): Promise<"completed" | "abandoned" | "waiting"> {
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

/** Reconciles with the Worker's bindings and vars: every account's payments (cron), or one account's (its credits page). */
export async function reconcileFromEnv(env: Env, scope: { accountId?: string } = {}): Promise<ReconcileReport> {
  const s = settings(env);
  return reconcilePayments(await paymentDeps(env), { ...scope, limit: s.PAYMENTS_RECONCILE_BATCH, abandonAfterMs: s.PAYMENT_ABANDON_AFTER_MS });
}
