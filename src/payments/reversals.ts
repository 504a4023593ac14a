import type Stripe from "stripe";
import type { Payment } from "../db/schema";
import { logEvent } from "../log-error";
import type { Applied } from "./apply-session";
import { applySession } from "./apply-session";
import { paymentGrantId, type PaymentDeps } from "./grant-payment";
import { NANO_PER_CENT } from "./payment-terms";
import { findPayment, findPaymentByReference, recordReversal } from "./payments-store";

const idOf = (x: string | { id: string } | null | undefined) => (typeof x === "string" ? x : (x?.id ?? null));

/** The payment a charge belongs to: by its metadata (the PaymentIntent's, set at checkout), our record of its PaymentIntent, or its Checkout Session at Stripe. */
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
 * Dispute statuses whose money is not withheld: won (Stripe gave it back), an inquiry closed without a
 * chargeback (`warning_closed`; `charge_refunded` in older API versions: the refund is counted as a
 * refund), `prevented` (resolved before becoming a chargeback). Every other status — an open inquiry or
 * chargeback, `lost`, an appeal, one Stripe adds later — withholds the disputed amount.
 */
const RELEASED: ReadonlySet<string> = new Set(["won", "warning_closed", "charge_refunded", "prevented"]);

/** What the charge's state takes back of a grant: the amount refunded, then the disputes' withheld amounts, together at most the grant. */
export function takenBack(grantNano: number, amountRefundedCents: number, disputes: Array<Pick<Stripe.Dispute, "status" | "amount">>) {
  const withheldCents = disputes.filter((d) => !RELEASED.has(d.status)).reduce((sum, d) => sum + d.amount, 0);
  const refundedNano = Math.min(grantNano, amountRefundedCents * NANO_PER_CENT);
  const disputedNano = Math.min(grantNano - refundedNano, withheldCents * NANO_PER_CENT);
  return { refundedNano, disputedNano };
}

/** The charge as Stripe has it now: its cumulative `amount_refunded` and every dispute of it (a charge has one or two). */
async function chargeNow(stripe: Stripe, chargeId: string): Promise<{ charge: Stripe.Charge; disputes: Stripe.Dispute[] }> {
  const [charge, disputes] = await Promise.all([stripe.charges.retrieve(chargeId), stripe.disputes.list({ charge: chargeId, limit: 100 })]);
  if (disputes.has_more) throw new Error(`charge ${chargeId} has more than 100 disputes`);
  return { charge, disputes: disputes.data };
}

/**
 * Any refund or dispute event about a charge (`charge.refunded`, `charge.refund.updated`,
 * `charge.dispute.*`): the event only says which charge changed. Its state now is read from Stripe's
 * API — the amount refunded and its disputes — and the payment's one ledger reversal is set to what
 * that state takes back (`takenBack`), raised or lowered. So the credits follow Stripe's present state
 * whatever order the events arrive in, late or twice; the reading's time keeps an older reading (an
 * event processed at the same moment as a newer one) from being stored last. Stripe unreachable: the
 * call throws before anything is written, the webhook answers 500, and Stripe delivers the event again.
 */
export async function applyChargeChange(deps: PaymentDeps, chargeId: string): Promise<Applied> {
  const observedAt = deps.now();
  const { charge, disputes } = await chargeNow(deps.stripe, chargeId);
  const paymentIntent = idOf(charge.payment_intent);
  const found = await paymentOf(deps, paymentIntent, charge.metadata);
  if (!found) return { paymentId: null, outcome: "ignored: not a payment of this deployment", done: "ignored" };
  if ((found.reference !== null && found.reference !== paymentIntent) || charge.currency !== "usd") {
    logEvent("stripe charge does not match its payment: nothing taken back", { payment: found.id, charge: charge.id });
    return { paymentId: found.id, outcome: "refused: another charge", done: "ignored" };
  }
  const payment = await granted(deps, found);
  const { refundedNano, disputedNano } = takenBack(payment.amountNano, charge.amount_refunded, disputes);
  const grantId = paymentGrantId(payment.id);
  const r = await deps.reverse(payment.accountId, { grantId, amountNano: refundedNano + disputedNano, observedAt, source: "stripe" });
  if (r.stale) return { paymentId: payment.id, outcome: "stale: a newer reading of the charge was applied already", done: "granted" };
  await recordReversal(deps.d1, payment.id, { refundedNano, disputedNano, observedAt });
  const open = disputes.filter((d) => !RELEASED.has(d.status)).map((d) => d.status);
  return {
    paymentId: payment.id,
    outcome: `charge: ${charge.amount_refunded} cents refunded, disputes withheld: ${open.join(", ") || "none"}; ${r.reversedNano} nano-USD of credits taken back in all`,
    done: "granted",
  };
}
