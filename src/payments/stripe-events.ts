import type Stripe from "stripe";
import { applySession, type Applied } from "./apply-session";
import type { PaymentDeps } from "./grant-payment";
import { applyDispute, applyRefund } from "./reversals";

type EventOf<T extends Stripe.Event["type"]> = Extract<Stripe.Event, { type: T }>;

/**
 * What each signed Stripe event does. Every step is idempotent (grant and reversal ids, conditional
 * status updates), so a duplicate delivery changes nothing and the order of delivery does not matter.
 * The webhook endpoint in Stripe's dashboard subscribes to exactly these types (docs/payments.md).
 */
const HANDLERS: { [T in Stripe.Event["type"]]?: (deps: PaymentDeps, event: EventOf<T>) => Promise<Applied> } = {
  "checkout.session.completed": (deps, e) => applySession(deps, e.data.object),
  "checkout.session.async_payment_succeeded": (deps, e) => applySession(deps, e.data.object),
  "checkout.session.async_payment_failed": (deps, e) => applySession(deps, e.data.object, { asyncFailed: true }),
  "checkout.session.expired": (deps, e) => applySession(deps, e.data.object),
  "charge.refunded": (deps, e) => applyRefund(deps, e.data.object),
  "charge.dispute.created": (deps, e) => applyDispute(deps, e.data.object),
  "charge.dispute.updated": (deps, e) => applyDispute(deps, e.data.object),
  "charge.dispute.closed": (deps, e) => applyDispute(deps, e.data.object),
};

/** The event types acted on: the endpoint's subscription. */
export const STRIPE_EVENT_TYPES = Object.keys(HANDLERS) as Array<Stripe.Event["type"]>;

export function applyStripeEvent(deps: PaymentDeps, event: Stripe.Event): Promise<Applied> {
  const handler = HANDLERS[event.type] as ((deps: PaymentDeps, event: Stripe.Event) => Promise<Applied>) | undefined;
  if (!handler) return Promise.resolve({ paymentId: null, outcome: "ignored: not an event type this deployment acts on", done: "ignored" });
  return handler(deps, event);
}
