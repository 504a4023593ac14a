import type Stripe from "stripe";
import type { Payment } from "../db/schema";
import { logEvent } from "../log-error";
import { grantCharged, type PaymentDeps } from "./grant-payment";
import { NANO_PER_CENT } from "./payment-terms";
import { findPayment, recordCharged, recordCheckoutSession, recordFailed } from "./payments-store";

/** What a step did to a payment, for the event audit and the reconciliation report. */
export type Applied = { paymentId: string | null; outcome: string; done: "granted" | "failed" | "waiting" | "ignored" };

/** Why a session does not belong to its payment row (a bug or tampering, never acted on), or null. */
function mismatch(payment: Payment, session: Stripe.Checkout.Session): string | null {
  if (session.client_reference_id !== payment.accountId || session.metadata?.account_id !== payment.accountId) return "another account";
  if (payment.checkoutSession !== null && payment.checkoutSession !== session.id) return "another checkout session";
  if (session.currency !== "usd" || session.amount_total !== (payment.amountNano + payment.feeNano) / NANO_PER_CENT) return "another amount";
  return null;
}

const intentId = (session: Stripe.Checkout.Session) =>
  typeof session.payment_intent === "string" ? session.payment_intent : (session.payment_intent?.id ?? `session:${session.id}`);

/**
 * Brings a payment up to what Stripe says of its Checkout Session — from a signed webhook or from
 * Stripe's API (reconciliation), never from anything the browser says: paid → charged → granted once
 * (grant id `payment:<id>`); expired → failed; open or paid asynchronously later → waits.
 */
export async function applySession(deps: PaymentDeps, session: Stripe.Checkout.Session, opts: { asyncFailed?: boolean } = {}): Promise<Applied> {
  const paymentId = session.metadata?.payment_id ?? null;
  const payment = paymentId ? await findPayment(deps.d1, paymentId) : undefined;
  if (!paymentId || !payment) return { paymentId, outcome: "ignored: not a checkout of this deployment", done: "ignored" };
  const wrong = mismatch(payment, session);
  if (wrong) {
    logEvent("stripe checkout session does not match its payment: not granted", { payment: payment.id, session: session.id, problem: wrong });
    return { paymentId, outcome: `refused: ${wrong}`, done: "ignored" };
  }
  if (payment.checkoutSession === null) await recordCheckoutSession(deps.d1, payment.accountId, payment.id, session.id);
  if (session.status === "complete" && session.payment_status === "paid") {
    if (payment.status === "succeeded") return { paymentId, outcome: "already granted", done: "granted" };
    await recordCharged(deps.d1, payment.accountId, payment.id, intentId(session));
    await grantCharged(deps, payment);
    return { paymentId, outcome: "granted", done: "granted" };
  }
  if (session.status === "expired" || opts.asyncFailed) {
    await recordFailed(deps.d1, payment.accountId, payment.id);
    return { paymentId, outcome: session.status === "expired" ? "expired: nothing charged" : "payment failed: nothing charged", done: "failed" };
  }
  return { paymentId, outcome: session.status === "open" ? "waiting: checkout open" : "waiting: payment processing", done: "waiting" };
}
