// Refunds of a paid charge: partial or whole, never beyond what is left, each announced by events.
import type Stripe from "stripe";
import { refund } from "./charge-objects";
import { closeDispute, disputesOf, isOpen, kindOf } from "./disputes";
import { ApiError, invalid, noSuch } from "./errors";
import { formatMoney } from "./money";
import type { Params } from "./params";
import { NO_REQUEST, type RequestRef, type Store } from "./store";

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

/**
 * A chargeback not won: its money is gone to the card network (open: withdrawn pending the decision;
 * lost: for good), so Stripe refuses a refund. An inquiry moved no money: the charge stays refundable.
 */
function chargedBack(store: Store, chargeId: string): boolean {
  return disputesOf(store, chargeId).some((d) => kindOf(d) === "chargeback" && d.status !== "won");
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
  // Refunded in full, an open inquiry is resolved: it closes without becoming a chargeback.
  if (charge.refunded)
    for (const d of disputesOf(store, charge.id)) if (kindOf(d) === "inquiry" && isOpen(d)) closeDispute(store, d.id, "warning_closed", request);
  return made;
}

/**
 * A refund the card network sends back (an expired or closed card): `failed`, its amount no longer
 * counted in the charge's `amount_refunded` (the money is back in the balance); emits
 * `charge.refund.updated` and `refund.failed`.
 */
export function failRefund(store: Store, id: string): Stripe.Refund {
  const found = store.refunds.get(id);
  if (!found) throw noSuch("refund", id);
  if (found.status !== "succeeded" && found.status !== "pending") throw invalid("status", `This refund has already ${found.status}.`);
  const charge = store.charges.get(found.charge as string)!;
  found.status = "failed";
  found.failure_reason = "expired_or_canceled_card";
  charge.amount_refunded -= found.amount;
  charge.refunded = false;
  store.emit("charge.refund.updated", found, NO_REQUEST);
  store.emit("refund.failed", found, NO_REQUEST);
  return found;
}
