import type Stripe from "stripe";
import type { Payment } from "../db/schema";
import type { Applied } from "./apply-session";
import { applySession } from "./apply-session";
import { paymentGrantId, type PaymentDeps } from "./grant-payment";
import { NANO_PER_CENT } from "./payment-terms";
import { findPayment, findPaymentByReference, recordReversal } from "./payments-store";

const idOf = (x: string | { id: string } | null | undefined) => (typeof x === "string" ? x : (x?.id ?? null));

/** The payment a charge or dispute belongs to: by the PaymentIntent's metadata, our record of it, or its Checkout Session at Stripe. */
async function paymentOf(deps: PaymentDeps, paymentIntent: string | null, metadata: Stripe.Metadata | null | undefined): Promise<Payment | undefined> {
  const byMetadata = metadata?.payment_id ? await findPayment(deps.d1, metadata.payment_id) : undefined;
  if (byMetadata || !paymentIntent) return byMetadata;
  const byReference = await findPaymentByReference(deps.d1, paymentIntent);
  if (byReference) return byReference;
  // The refund or dispute came before the checkout's own event: its session names the payment.
  const sessions = await deps.stripe.checkout.sessions.list({ payment_intent: paymentIntent, limit: 1 });
  const id = sessions.data[0]?.metadata?.payment_id;
  return id ? findPayment(deps.d1, id) : undefined;
}

/**
 * A refund or dispute may arrive before the checkout's completion (webhooks come in any order): the
 * payment is first brought up to date from Stripe, so its credits are granted before any is taken back.
 */
async function granted(deps: PaymentDeps, payment: Payment): Promise<Payment> {
  if (payment.status === "succeeded" || payment.checkoutSession === null) return payment;
  await applySession(deps, await deps.stripe.checkout.sessions.retrieve(payment.checkoutSession));
  const now = await findPayment(deps.d1, payment.id);
  if (now?.status !== "succeeded") throw new Error("refund or dispute of a payment not granted yet"); // a 500: Stripe retries
  return now;
}

/**
 * `charge.refunded`: the refunded amount comes off the payment's credits (up to all of them; a refund of
 * the fee as well takes no more). Stripe's `amount_refunded` is cumulative, and the ledger only ever
 * raises a reversal, so a late event with an older figure changes nothing.
 */
export async function applyRefund(deps: PaymentDeps, charge: Stripe.Charge): Promise<Applied> {
  const found = await paymentOf(deps, idOf(charge.payment_intent), charge.metadata);
  if (!found) return { paymentId: null, outcome: "ignored: not a payment of this deployment", done: "ignored" };
  const payment = await granted(deps, found);
  const amountNano = Math.min(payment.amountNano, charge.amount_refunded * NANO_PER_CENT);
  const grantId = paymentGrantId(payment.id);
  const r = await deps.reverse(payment.accountId, { reversalId: `${grantId}:refund`, grantId, amountNano, final: false, source: "stripe-refund" });
  await recordReversal(deps.d1, payment.id, "refunded", r.reversedNano);
  return { paymentId: payment.id, outcome: `refund: ${r.reversedNano} nano-USD of credits taken back in all`, done: "granted" };
}

/** Dispute statuses that give the money back to us: final, whatever older event arrives later. */
const RESOLVED_FOR_US = new Set(["won", "warning_closed", "prevented", "charge_refunded"]);

/**
 * `charge.dispute.*`: while a dispute is open (or lost) its amount of credits is withheld (Stripe took
 * the money back); won, the credits come back, finally: an older event arriving later changes nothing.
 */
export async function applyDispute(deps: PaymentDeps, dispute: Stripe.Dispute): Promise<Applied> {
  const found = await paymentOf(deps, idOf(dispute.payment_intent), null);
  if (!found) return { paymentId: null, outcome: "ignored: not a payment of this deployment", done: "ignored" };
  const payment = await granted(deps, found);
  const final = RESOLVED_FOR_US.has(dispute.status);
  const withheld = final ? 0 : Math.min(payment.amountNano, dispute.amount * NANO_PER_CENT);
  const grantId = paymentGrantId(payment.id);
  const r = await deps.reverse(payment.accountId, {
    reversalId: `${grantId}:dispute:${dispute.id}`,
    grantId,
    amountNano: withheld,
    final,
    source: "stripe-dispute",
  });
  await recordReversal(deps.d1, payment.id, "disputed", r.reversedNano);
  return { paymentId: payment.id, outcome: `dispute ${dispute.status}: ${r.reversedNano} nano-USD of credits withheld`, done: "granted" };
}
