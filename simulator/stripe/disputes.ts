// Disputes: opened, reviewed and closed by the test through the control API, as a card network
// would (Stripe's API cannot create them either). Two kinds, as Stripe reports them: a chargeback
// (`needs_response` → `under_review` → `won` | `lost`: the money leaves the balance when it opens, so
// the charge can no longer be refunded) and an inquiry (`warning_needs_response` →
// `warning_under_review` → `warning_closed`: nothing has moved yet, the charge can still be refunded,
// and refunding all of it closes the inquiry).
import type Stripe from "stripe";
import { dispute } from "./charge-objects";
import { invalid, noSuch } from "./errors";
import { NO_REQUEST, type RequestRef, type Store } from "./store";

export type DisputeKind = "chargeback" | "inquiry";

const OPEN: Record<DisputeKind, readonly string[]> = {
  chargeback: ["needs_response", "under_review"],
  inquiry: ["warning_needs_response", "warning_under_review"],
};
/**
 * How each kind may close. `charge_refunded` is what older API versions reported for a dispute closed
 * by a refund (current ones say `warning_closed`): closing with it stands in for an account pinned to
 * such a version.
 */
const CLOSED: Record<DisputeKind, readonly string[]> = { chargeback: ["won", "lost"], inquiry: ["warning_closed", "charge_refunded"] };

export const kindOf = (d: Stripe.Dispute): DisputeKind => (d.status.startsWith("warning_") || d.status === "charge_refunded" ? "inquiry" : "chargeback");
export const isOpen = (d: Stripe.Dispute) => OPEN[kindOf(d)].includes(d.status);

/** The disputes of a charge, oldest first. */
export function disputesOf(store: Store, chargeId: string): Stripe.Dispute[] {
  return [...store.disputes.values()].filter((d) => d.charge === chargeId);
}

/**
 * Opens a dispute on the PaymentIntent's charge (default: its whole amount); emits `charge.dispute.created`.
 * A charge has at most one open dispute, and one chargeback ever; an inquiry that closed leaves room for a chargeback.
 */
export function openDispute(store: Store, paymentIntentId: string, opts: { amount?: number; kind?: DisputeKind } = {}): Stripe.Dispute {
  const intent = store.paymentIntents.get(paymentIntentId);
  if (!intent) throw noSuch("payment_intent", paymentIntentId, "payment_intent");
  const charge = store.charges.get(intent.latest_charge as string)!;
  const kind = opts.kind ?? "chargeback";
  const before = disputesOf(store, charge.id);
  if (before.some((d) => isOpen(d) || kindOf(d) === "chargeback")) throw invalid("payment_intent", `The charge ${charge.id} is already disputed.`);
  const disputed = opts.amount ?? charge.amount;
  if (!Number.isInteger(disputed) || disputed < 1 || disputed > charge.amount) throw invalid("amount", `amount must be an integer from 1 to ${charge.amount}`);
  const made = dispute(charge, disputed, store.now(), kind);
  store.disputes.set(made.id, made);
  charge.disputed = true;
  store.emit("charge.dispute.created", made, NO_REQUEST);
  return made;
}

function openOne(store: Store, id: string): Stripe.Dispute {
  const found = store.disputes.get(id);
  if (!found) throw noSuch("dispute", id);
  if (!isOpen(found)) throw invalid("status", `This dispute is already closed (${found.status}).`);
  return found;
}

/** Evidence submitted: `needs_response` → `under_review` (an inquiry: `warning_under_review`); emits `charge.dispute.updated`. */
export function reviewDispute(store: Store, id: string): Stripe.Dispute {
  const found = openOne(store, id);
  found.status = kindOf(found) === "inquiry" ? "warning_under_review" : "under_review";
  found.evidence_details.has_evidence = true;
  found.evidence_details.submission_count += 1;
  store.emit("charge.dispute.updated", found, NO_REQUEST);
  return found;
}

/** Closes a dispute: a chargeback as won or lost, an inquiry as `warning_closed` (or `charge_refunded`); emits `charge.dispute.closed`. */
export function closeDispute(store: Store, id: string, status: string, request: RequestRef = NO_REQUEST): Stripe.Dispute {
  const found = openOne(store, id);
  const kind = kindOf(found);
  if (!CLOSED[kind].includes(status)) throw invalid("status", `A${kind === "inquiry" ? "n inquiry" : " chargeback"} closes as ${CLOSED[kind].join(" or ")}.`);
  found.status = status as Stripe.Dispute.Status;
  found.is_charge_refundable = false;
  store.emit("charge.dispute.closed", found, request);
  return found;
}

/** `GET /v1/disputes`: the disputes, newest first, of one charge or PaymentIntent when asked. */
export function listDisputes(store: Store, filter: { charge?: string; paymentIntent?: string }): Stripe.Dispute[] {
  return [...store.disputes.values()]
    .filter(
      (d) => (filter.charge === undefined || d.charge === filter.charge) && (filter.paymentIntent === undefined || d.payment_intent === filter.paymentIntent),
    )
    .reverse();
}
