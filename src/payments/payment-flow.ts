import type { Env } from "../env";
import type { Payment } from "../db/schema";
import { ledgerFor } from "../ledger/ledger";
import type { GrantRequest, GrantResult } from "../ledger/ledger-object";
import { logError } from "../log-error";
import type { PaymentIntent, PaymentProvider } from "./payment-provider";
import { beginPayment, recordCharged, recordDeclined, recordSucceeded } from "./payments-store";

/** What a payment needs: its store (D1), the processor, and the account ledger's grant (idempotent per grant id). */
export type PaymentDeps = {
  d1: D1Database;
  provider: PaymentProvider;
  grant(accountId: string, req: GrantRequest): Promise<GrantResult>;
};

export type PaymentOutcome =
  /** Charged and granted by this call (or a repeat of the form finished what an earlier one started). */
  | { kind: "added" }
  /** Charged, but the grant did not go through now: reconciliation grants it (docs/console.md, Payments). */
  | { kind: "processing" }
  | { kind: "declined"; message: string }
  /** This form was already processed to the end (succeeded, declined or given up); nothing done. */
  | { kind: "done-before" }
  /** The payment id belongs to another account; nothing done. */
  | { kind: "not-yours" };

/** The ledger grant of a payment: its id makes the grant happen once, however often it is asked for. */
export const paymentGrantId = (paymentId: string) => `payment:${paymentId}`;

/**
 * Adds credits: begin (pending, under the form's payment id) → charge (the payment id as idempotency
 * key) → charged + the processor's reference → grant `payment:<id>` → succeeded. Every step is
 * idempotent, so the same form sent again resumes where an earlier attempt stopped (a crash, a lost
 * reply), and the amount is always the one recorded first. Never two charges, never two grants.
 */
export async function pay(deps: PaymentDeps, intent: PaymentIntent, fields: Readonly<Record<string, string>>): Promise<PaymentOutcome> {
  const payment = await beginPayment(deps.d1, { ...intent, provider: deps.provider.id });
  if (!payment) return { kind: "not-yours" };
  if (payment.status !== "pending" && payment.status !== "charged") return { kind: "done-before" };
  if (payment.status === "pending") {
    const result = await deps.provider.charge({ id: payment.id, accountId: payment.accountId, amountNano: payment.amountNano }, fields);
    if (!result.ok) {
      await recordDeclined(deps.d1, payment.accountId, payment.id);
      return { kind: "declined", message: result.message };
    }
    await recordCharged(deps.d1, payment.accountId, payment.id, result.reference);
  }
  try {
    await grantCharged(deps, payment);
  } catch (err) {
    logError("payment charged, grant deferred to reconciliation", err, { payment: payment.id });
    return { kind: "processing" };
  }
  return { kind: "added" };
}

/** The last two steps, for a payment the processor has charged: grant once, then mark it succeeded. */
export async function grantCharged(deps: Pick<PaymentDeps, "d1" | "grant">, payment: Pick<Payment, "id" | "accountId" | "amountNano">): Promise<void> {
  await deps.grant(payment.accountId, { grantId: paymentGrantId(payment.id), amountNano: payment.amountNano, source: "console-payment" });
  await recordSucceeded(deps.d1, payment.accountId, payment.id);
}

/** The account ledger's grant, through its Durable Object. */
export function ledgerGrant(env: Env): PaymentDeps["grant"] {
  return (accountId, req) => ledgerFor(env, accountId).grant(req);
}
