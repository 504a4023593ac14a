import type { Env } from "../env";
import type { Payment } from "../db/schema";
import { logError } from "../log-error";
import { settings } from "../settings";
import type { PaymentProvider } from "./payment-provider";
import { paymentProvider } from "./connected-provider";
import { grantCharged, ledgerGrant, type PaymentDeps } from "./payment-flow";
import { recordAbandoned, recordCharged, unfinishedPayments } from "./payments-store";

export type ReconcileDeps = Pick<PaymentDeps, "d1" | "grant"> & {
  /** The processors connected now: pending payments of others wait (they cannot be looked up). */
  providers: readonly PaymentProvider[];
};
export type ReconcileOptions = { accountId?: string; limit: number; abandonAfterMs: number; now: number };
export type ReconcileReport = { completed: number; abandoned: number; waiting: number; errors: number };

/**
 * Finishes payments a crash or a lost reply left unfinished, oldest first, at most `limit`: a charged
 * one is granted (once: the grant id is the payment's); a pending one is looked up at its processor —
 * charged there, it is recorded and granted; charged nowhere and older than `abandonAfterMs`, it is
 * given up (failed; nothing was taken); younger, it may still be under way and waits.
 */
export async function reconcilePayments(deps: ReconcileDeps, opts: ReconcileOptions): Promise<ReconcileReport> {
  const report: ReconcileReport = { completed: 0, abandoned: 0, waiting: 0, errors: 0 };
  for (const payment of await unfinishedPayments(deps.d1, { ...opts, providers: deps.providers.map((p) => p.id) })) {
    try {
      report[await reconcileOne(deps, payment, opts)]++;
    } catch (err) {
      report.errors++;
      logError("payment reconciliation failed", err, { payment: payment.id });
    }
  }
  return report;
}

async function reconcileOne(deps: ReconcileDeps, payment: Payment, opts: ReconcileOptions): Promise<"completed" | "abandoned" | "waiting"> {
  if (payment.status === "pending") {
    const provider = deps.providers.find((p) => p.id === payment.provider);
    if (!provider) return "waiting";
    const charge = await provider.findCharge(payment.id);
    if (!charge) {
      if (opts.now - payment.createdAt < opts.abandonAfterMs) return "waiting";
      await recordAbandoned(deps.d1, payment.accountId, payment.id);
      return "abandoned";
    }
    if (charge.accountId !== payment.accountId || charge.amountNano !== payment.amountNano) throw new Error("charge does not match its payment");
    await recordCharged(deps.d1, payment.accountId, payment.id, charge.reference);
  }
  await grantCharged(deps, payment);
  return "completed";
}

/** Reconciles with the Worker's bindings and vars: every account's payments (cron), or one account's (its credits page). */
export function reconcileFromEnv(env: Env, scope: { accountId?: string } = {}): Promise<ReconcileReport> {
  const provider = paymentProvider(env);
  return reconcilePayments(
    { d1: env.DB, grant: ledgerGrant(env), providers: provider ? [provider] : [] },
    {
      ...scope,
      limit: settings(env).PAYMENTS_RECONCILE_BATCH,
      abandonAfterMs: settings(env).PAYMENT_ABANDON_AFTER_MS,
      now: Date.now(),
    },
  );
}
