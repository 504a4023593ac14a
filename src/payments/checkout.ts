import type { Payment } from "../db/schema";
import type { PaymentDeps } from "./grant-payment";
import { NANO_PER_CENT, type Quote } from "./payment-terms";
import { beginPayment, findPayment, recordCheckoutSession, recordFailed } from "./payments-store";

export type CheckoutRequest = { paymentId: string; accountId: string; quote: Quote; origin: string; expiryS: number; email?: string };

export type CheckoutOutcome =
  /** Send the person to Stripe's hosted checkout (a resubmitted form goes back to the same session). */
  | { kind: "redirect"; url: string }
  /** This form was paid, or given up, already; nothing done. */
  | { kind: "done-before" }
  /** Too late to make its checkout (Stripe wants 30 min of life left); nothing charged. */
  | { kind: "expired" }
  /** The payment id belongs to another account; nothing done. */
  | { kind: "not-yours" };

/**
 * Starts paying for credits: the payment is recorded pending under the form's one-time id, then a
 * Checkout Session is made with that id as Stripe's idempotency key — the same parameters every time
 * (its expiry counts from the payment's creation), so a resubmitted form or a retry after a lost reply
 * gets the same session, never a second one. Credits come only later, from Stripe's word that it is paid.
 */
export async function startCheckout(deps: PaymentDeps, req: CheckoutRequest): Promise<CheckoutOutcome> {
  const payment = await beginPayment(deps.d1, {
    id: req.paymentId,
    accountId: req.accountId,
    amountNano: req.quote.creditsNano,
    feeNano: req.quote.feeNano,
    now: deps.now(),
  });
  if (!payment) return { kind: "not-yours" };
  if (payment.status !== "pending") return { kind: "done-before" };
  if (payment.checkoutSession) {
    const session = await deps.stripe.checkout.sessions.retrieve(payment.checkoutSession);
    if (session.status === "open" && session.url) return { kind: "redirect", url: session.url };
    return { kind: "done-before" }; // paid or expired: reconciliation on the credits page says which
  }
  const expiresAt = Math.floor(payment.createdAt / 1000) + req.expiryS;
  if (expiresAt - deps.now() / 1000 < 31 * 60) {
    await recordFailed(deps.d1, payment.accountId, payment.id);
    return { kind: "expired" };
  }
  const session = await deps.stripe.checkout.sessions.create(sessionParams(payment, req, expiresAt), { idempotencyKey: payment.id });
  await recordCheckoutSession(deps.d1, payment.accountId, payment.id, session.id);
  if (!session.url) throw new Error("Stripe made a checkout session without a URL");
  return { kind: "redirect", url: session.url };
}

/** The session: the credits and the platform fee as two lines (the fee never granted), ids in the metadata. */
function sessionParams(payment: Payment, req: CheckoutRequest, expiresAt: number) {
  const creditsCents = payment.amountNano / NANO_PER_CENT;
  const feeCents = payment.feeNano / NANO_PER_CENT;
  const line = (name: string, cents: number, description: string) => ({
    quantity: 1,
    price_data: { currency: "usd", unit_amount: cents, product_data: { name, description } },
  });
  const ids = { payment_id: payment.id, account_id: payment.accountId };
  return {
    mode: "payment" as const,
    line_items: [
      line("Switchyard credits", creditsCents, "Prepaid credits for API requests, in USD"),
      ...(feeCents > 0 ? [line("Platform fee", feeCents, "Payment processing and platform fee; not added to your credits")] : []),
    ],
    client_reference_id: payment.accountId,
    metadata: { ...ids, credits_cents: String(creditsCents), fee_cents: String(feeCents) },
    payment_intent_data: { metadata: ids },
    ...(req.email ? { customer_email: req.email } : {}),
    success_url: `${req.origin}/settings/credits?checkout=${payment.id}`,
    cancel_url: `${req.origin}/settings/credits?cancelled=${payment.id}`,
    expires_at: expiresAt,
  };
}

/** The person came back from checkout without paying: its session is expired at Stripe and the payment fails. */
export async function cancelCheckout(deps: PaymentDeps, accountId: string, paymentId: string): Promise<void> {
  const payment = await findPayment(deps.d1, paymentId, accountId);
  if (!payment || payment.status !== "pending" || !payment.checkoutSession) return;
  const session = await deps.stripe.checkout.sessions.retrieve(payment.checkoutSession);
  if (session.status !== "open") return; // paid meanwhile, or expired: reconciliation records which
  await deps.stripe.checkout.sessions.expire(session.id);
  await recordFailed(deps.d1, accountId, payment.id);
}
