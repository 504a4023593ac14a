import type Stripe from "stripe";
import { applySession, type Applied } from "./apply-session";
import type { PaymentDeps } from "./grant-payment";
import { applyChargeChange } from "./reversals";

type EventOf<T extends Stripe.Event["type"]> = Extract<Stripe.Event, { type: T }>;

/** A refund or dispute event: what its charge's present state takes back (a refund of no charge concerns no payment here). */
function chargeChanged(deps: PaymentDeps, charge: string | Stripe.Charge | null): Promise<Applied> {
  if (charge === null) return Promise.resolve({ paymentId: null, outcome: "ignored: no charge", done: "ignored" });
  return applyChargeChange(deps, typeof charge === "string" ? charge : charge.id);
}

/**
 * What each signed Stripe event does. Checkout events apply their session (idempotent: the grant id,
 * conditional status updates); refund and dispute events only name a charge whose present state is read
 * from Stripe's API (`applyChargeChange`), so neither their order nor duplicates change the outcome.
 * The webhook endpoint in Stripe's dashboard subscribes to exactly these types (docs/payments.md).
 */
const HANDLERS: { [T in Stripe.Event["type"]]?: (deps: PaymentDeps, event: EventOf<T>) => Promise<Applied> } = {
  "checkout.session.completed": (deps, e) => applySession(deps, e.data.object),
  "checkout.session.async_payment_succeeded": (deps, e) => applySession(deps, e.data.object),
  "checkout.session.async_payment_failed": (deps, e) => applySession(deps, e.data.object, { asyncFailed: true }),
  "checkout.session.expired": (deps, e) => applySession(deps, e.data.object),
  "charge.refunded": (deps, e) => chargeChanged(deps, e.data.object.id),
  "charge.refund.updated": (deps, e) => chargeChanged(deps, e.data.object.charge),
  "charge.dispute.created": (deps, e) => chargeChanged(deps, e.data.object.charge),
  "charge.dispute.updated": (deps, e) => chargeChanged(deps, e.data.object.charge),
  "charge.dispute.closed": (deps, e) => chargeChanged(deps, e.data.object.charge),
};

/** The event types acted on: the endpoint's subscription. */
export const STRIPE_EVENT_TYPES = Object.keys(HANDLERS) as Array<Stripe.Event["type"]>;

export function applyStripeEvent(deps: PaymentDeps, event: Stripe.Event): Promise<Applied> {
  const handler = HANDLERS[event.type] as ((deps: PaymentDeps, event: Stripe.Event) => Promise<Applied>) | undefined;
  if (!handler) return Promise.resolve({ paymentId: null, outcome: "ignored: not an event type this deployment acts on", done: "ignored" });
  return handler(deps, event);
}
