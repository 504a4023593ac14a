import type Stripe from "stripe";
import type { Env } from "../env";
import type { Payment } from "../db/schema";
import { ledgerFor } from "../ledger/ledger";
import type { GrantRequest, GrantResult, ReverseRequest, ReverseResult } from "../ledger/contract";
import { recordSucceeded } from "./payments-store";
import { stripeAccess } from "./stripe-client";

/** What the payment steps need: the payments table (D1), Stripe, and the account ledger's grant and reversal (idempotent by id). */
export type PaymentDeps = {
  d1: D1Database;
  stripe: Stripe;
  grant(accountId: string, req: GrantRequest): Promise<GrantResult>;
  reverse(accountId: string, req: ReverseRequest): Promise<ReverseResult>;
  now(): number;
};

/** The same with Stripe absent when payments are off: reconciliation still grants what Stripe charged. */
export type MaybeConnectedDeps = Omit<PaymentDeps, "stripe"> & { stripe: Stripe | null };

/** The ledger grant of a payment: its id makes the grant happen once, however often it is asked for. */
export const paymentGrantId = (paymentId: string) => `payment:${paymentId}`;

/** The last two steps, for a payment Stripe has charged: grant its credits once (never the fee), then mark it succeeded. */
export async function grantCharged(deps: Pick<PaymentDeps, "d1" | "grant">, payment: Pick<Payment, "id" | "accountId" | "amountNano">): Promise<void> {
  await deps.grant(payment.accountId, { grantId: paymentGrantId(payment.id), amountNano: payment.amountNano, source: "console-payment" });
  await recordSucceeded(deps.d1, payment.accountId, payment.id);
}

/** The payment steps with the Worker's bindings and settings: D1, Stripe (null when off), each account's ledger Durable Object. */
export async function paymentDeps(env: Env): Promise<MaybeConnectedDeps> {
  return {
    d1: env.DB,
    stripe: (await stripeAccess(env))?.stripe ?? null,
    grant: (accountId, req) => ledgerFor(env, accountId).grant(req),
    reverse: (accountId, req) => ledgerFor(env, accountId).reverse(req),
    now: Date.now,
  };
}

/** The same, or null when payments are off: what taking a payment needs. */
export async function connectedPaymentDeps(env: Env): Promise<PaymentDeps | null> {
  const deps = await paymentDeps(env);
  return deps.stripe ? { ...deps, stripe: deps.stripe } : null;
}
