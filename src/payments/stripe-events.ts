import type Stripe from "stripe";
import { applySession, type Applied } from "./apply-session";
import type { PaymentDeps } from "./grant-payment";
import { applyDispute, applyRefund } from "./reversals";

/**
 * What each signed Stripe event does. Every step is idempotent (grant and reversal ids, conditional
 * status updates), so a duplicate delivery changes nothing and the order of delivery does not matter.
 * The webhook endpoint in Stripe's dashboard subscribes to exactly these types (docs/payments.md).
 */
export const STRIPE_EVENT_TYPES = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "checkout.session.async_payment_failed",
  "checkout.session.expired",
  "charge.refunded",
  "charge.dispute.created",
  "charge.dispute.updated",
  "charge.dispute.closed",
] as const;

export async function applyStripeEvent(deps: PaymentDeps, event: Stripe.Event): Promise<Applied> {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
    case "checkout.session.expired":
      return applySession(deps, event.data.object);
    case "checkout.session.async_payment_failed":
      return applySession(deps, event.data.object, { asyncFailed: true });
    case "charge.refunded":
      return applyRefund(deps, event.data.object);
    case "charge.dispute.created":
    case "charge.dispute.updated":
    case "charge.dispute.closed":
      return applyDispute(deps, event.data.object);
    default:
      return { paymentId: null, outcome: "ignored: not an event type this deployment acts on", done: "ignored" };
  }
}
