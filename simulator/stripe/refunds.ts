// Refunds of a paid charge: partial or whole, never beyond what is left, each announced by events.
import type Stripe from "stripe";
import { refund } from "./charge-objects";
import { ApiError, invalid, noSuch } from "./errors";
import { formatMoney } from "./money";
import type { Params } from "./params";
import type { RequestRef, Store } from "./store";

function chargeOf(store: Store, p: Params): Stripe.Charge {
  const chargeId = p.str("charge");
  const intentId = p.str("payment_intent");
  if (chargeId === undefined && intentId === undefined) throw invalid(undefined, "One of `charge` or `payment_intent` is required.", "parameter_missing");
  if (intentId !== undefined) {
    const intent = store.paymentIntents.get(intentId);
    if (!intent) throw noSuch("payment_intent", intentId, "payment_intent");
    const latest = typeof intent.latest_charge === "string" ? intent.latest_charge : intent.latest_charge?.id;
    if (chargeId !== undefined && chargeId !== latest) throw invalid("charge", `The charge ${chargeId} does not belong to the PaymentIntent ${intentId}.`);
    return store.charges.get(latest!)!;
  }
  const charge = store.charges.get(chargeId!);
  if (!charge) throw noSuch("charge", chargeId!, "charge");
  return charge;
}

/** A dispute not won: its money is (or may be) gone to the card network, so Stripe refuses a refund. */
function chargedBack(store: Store, chargeId: string): boolean {
  for (const d of store.disputes.values()) if (d.charge === chargeId && d.status !== "won") return true;
  return false;
}

/** `POST /v1/refunds`: refunds `amount` (default: all that is left), emits `refund.created` and `charge.refunded`. */
export function createRefund(store: Store, p: Params, request: RequestRef): Stripe.Refund {
  const charge = chargeOf(store, p);
  const left = charge.amount - charge.amount_refunded;
  const amount = p.int("amount", { min: 1 });
  const reason = p.oneOf("reason", ["duplicate", "fraudulent", "requested_by_customer"] as const) ?? null;
  const metadata = p.metadata("metadata") ?? {};
  p.done();
  if (left === 0)
    throw new ApiError(400, { type: "invalid_request_error", code: "charge_already_refunded", message: `Charge ${charge.id} has already been refunded.` });
  if (chargedBack(store, charge.id))
    throw new ApiError(400, {
      type: "invalid_request_error",
      code: "charge_disputed",
      message: `Charge ${charge.id} has been charged back; cannot issue a refund.`,
    });
  if (amount !== undefined && amount > left) {
    throw new ApiError(400, {
      type: "invalid_request_error",
      code: "amount_too_large",
      param: "amount",
      message: `Refund amount (${formatMoney(amount, charge.currency)}) is greater than unrefunded amount on charge (${formatMoney(left, charge.currency)})`,
    });
  }
  const made = refund(charge, amount ?? left, reason, metadata, store.now());
  store.refunds.set(made.id, made);
  charge.amount_refunded += made.amount;
  charge.refunded = charge.amount_refunded === charge.amount;
  store.emit("refund.created", made, request);
  store.emit("charge.refunded", charge, request);
  return made;
}
