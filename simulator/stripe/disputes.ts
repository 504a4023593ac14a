// Disputes (chargebacks): opened and closed by the test through the control API, as a card
// network would; Stripe's API cannot create them either.
import type Stripe from "stripe";
import { dispute } from "./charge-objects";
import { invalid, noSuch } from "./errors";
import { NO_REQUEST, type Store } from "./store";

/** Opens a fraud dispute on the PaymentIntent's charge (default: its whole amount); emits `charge.dispute.created`. */
export function openDispute(store: Store, paymentIntentId: string, amount?: number): Stripe.Dispute {
  const intent = store.paymentIntents.get(paymentIntentId);
  if (!intent) throw noSuch("payment_intent", paymentIntentId, "payment_intent");
  const charge = store.charges.get(intent.latest_charge as string)!;
  // A charge can be disputed once.
  if (charge.disputed) throw invalid("payment_intent", `The charge ${charge.id} is already disputed.`);
  const disputed = amount ?? charge.amount;
  if (!Number.isInteger(disputed) || disputed < 1 || disputed > charge.amount) throw invalid("amount", `amount must be an integer from 1 to ${charge.amount}`);
  const made = dispute(charge, disputed, store.now());
  store.disputes.set(made.id, made);
  charge.disputed = true;
  store.emit("charge.dispute.created", made, NO_REQUEST);
  return made;
}

/** Closes a dispute as won or lost; emits `charge.dispute.closed`. */
export function closeDispute(store: Store, id: string, status: "won" | "lost"): Stripe.Dispute {
  const found = store.disputes.get(id);
  if (!found) throw noSuch("dispute", id);
  if (found.status === "won" || found.status === "lost") throw invalid("status", `This dispute is already closed (${found.status}).`);
  found.status = status;
  found.is_charge_refundable = false;
  store.emit("charge.dispute.closed", found, NO_REQUEST);
  return found;
}
