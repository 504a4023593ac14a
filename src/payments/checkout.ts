import type { Payment } from "../db/schema";
import type { PaymentDeps } from "./grant-payment";
import type { StripeAllowance } from "./reconcile";
import { NANO_PER_CENT, type Quote } from "./payment-terms";
import { beginPayment, findPayment, recordCheckoutSession, recordFailed, type CheckoutLimits } from "./payments-store";

export type CheckoutRequest = {
  paymentId: string;
  accountId: string;
  quote: Quote;
  origin: string;
  expiryS: number;
  limits: CheckoutLimits;
  /** The account's Stripe calls (the console's allowance): the one call this may make is taken from it first. */
  allowance: StripeAllowance;
  email?: string;
};

export type CheckoutOutcome =
  /** Send the person to Stripe's hosted checkout (a resubmitted form goes back to the same session). */
  | { kind: "redirect"; url: string }
  /** This form was paid, or given up, already; nothing done. */
  | { kind: "done-before" }
  /** Too late to make its checkout (Stripe wants 30 min of life left); nothing charged. */
  | { kind: "expired" }
  /** The payment id belongs to another account; nothing done. */
  | { kind: "not-yours" }
  /** The account has its most open checkouts already; the oldest expires at `oldestExpiresAt` (Unix ms). Nothing done. */
  | { kind: "too-many-open"; open: number; oldestExpiresAt: number }
  /** The account started its most checkouts of an hour; the next may start at `retryAt` (Unix ms). Nothing done. */
  | { kind: "too-many-this-hour"; retryAt: number }
  /** The account's allowance of Stripe calls is spent for the minute; nothing done. */
  | { kind: "busy" };

/**
 * Starts paying for credits: the payment is recorded pending under the form's one-time id, then a
 * Checkout Session is made with that id as Stripe's idempotency key — the same parameters every time
 * (its expiry counts from the payment's creation), so a resubmitted form or a retry after a lost reply
 * gets the same session, never a second one. Credits come only later, from Stripe's word that it is paid.
 * A new payment is refused, asking Stripe nothing, when the account has its most checkouts open or
 * started its most of the hour (`req.limits`): no account can fill reconciliation with open sessions.
 */
export async function startCheckout(deps: PaymentDeps, req: CheckoutRequest): Promise<CheckoutOutcome> {
  // First, so a refusal writes nothing (the call is counted even if a limit then refuses: an ask all the same).
  if ((await req.allowance(1)) < 1) return { kind: "busy" };
  const begun = await beginPayment(
    deps.d1,
    { id: req.paymentId, accountId: req.accountId, amountNano: req.quote.creditsNano, feeNano: req.quote.feeNano, now: deps.now() },
    req.limits,
  );
  if (begun.kind === "too-many-open") return { kind: "too-many-open", open: begun.open, oldestExpiresAt: begun.oldestAt + req.expiryS * 1000 };
  if (begun.kind !== "payment") return begun;
  const { payment } = begun;
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

/**
 * The person came back from checkout without paying, or cancels an open checkout from the credits page:
 * its session is expired at Stripe and the payment fails. One whose session was never made just fails
 * (should the lost create call have made one, nobody was sent to it; paid anyway, a payment is granted from failed).
 */
export async function cancelCheckout(deps: PaymentDeps, accountId: string, paymentId: string, allowance: StripeAllowance): Promise<void> {
  const payment = await findPayment(deps.d1, paymentId, accountId);
  if (!payment || payment.status !== "pending") return;
  if (!payment.checkoutSession) return recordFailed(deps.d1, accountId, payment.id);
  if ((await allowance(2)) < 2) return; // its allowance spent: the session expires at Stripe by itself, reconciliation records it
  const session = await deps.stripe.checkout.sessions.retrieve(payment.checkoutSession);
  if (session.status !== "open") return; // paid meanwhile, or expired: reconciliation records which
  await deps.stripe.checkout.sessions.expire(session.id);
  await recordFailed(deps.d1, accountId, payment.id);
}
