import type { Env } from "../env";
import type { Payment } from "../db/schema";
import { logError } from "../log-error";
import type { Settings } from "../settings";
import { applySession } from "./apply-session";
import { grantCharged, paymentDeps, type MaybeConnectedDeps } from "./grant-payment";
import { recordFailed, recordLookedAt, unfinishedFairly, unfinishedOf } from "./payments-store";

/**
 * How many Stripe API calls a reconciliation may make: asked for up to `n`, answers how many (the
 * credits page's allowance, src/console/credits/stripe-allowance.ts); the Cron Trigger's is its batch.
 */
export type StripeAllowance = (n: number) => Promise<number>;
const BY_BATCH: StripeAllowance = async (n) => n;

export type ReconcileReport = {
  lookedAt: number;
  completed: number;
  abandoned: number;
  waiting: number;
  heldBack: number;
  errors: number;
  stripeCalls: number;
};
type Outcome = "completed" | "abandoned" | "waiting" | "heldBack";

/**
 * Finishes payments a lost webhook, a crash or a lost reply left unfinished: a charged one is granted
 * (once: the grant id is the payment's); a pending one is brought up to what Stripe's API says of its
 * Checkout Session — paid: granted; expired: failed; open past its expiry: expired at Stripe, then
 * failed. One whose session was never made fails after `abandonAfterMs` (its person was never sent to
 * pay). Without Stripe connected, charged payments are still granted. Every Stripe call is taken from
 * `allowance` first; none left: the payment waits for a later run (`heldBack`).
 */
async function reconcilePayments(deps: MaybeConnectedDeps, rows: Payment[], abandonAfterMs: number, allowance: StripeAllowance): Promise<ReconcileReport> {
  const report: ReconcileReport = { lookedAt: rows.length, completed: 0, abandoned: 0, waiting: 0, heldBack: 0, errors: 0, stripeCalls: 0 };
  // One ask for the calls the pending payments with a session need (a page asks its allowance once); an expiry asks again.
  let granted = await allowance(deps.stripe ? rows.filter((p) => p.status === "pending" && p.checkoutSession).length : 0);
  let spent = false; // refused once: not asked again this run
  const call = async () => {
    if (granted === 0 && !spent) granted = await allowance(1);
    spent = granted === 0;
    if (spent) return false;
    granted--;
    report.stripeCalls++;
    return true;
  };
  for (const payment of rows) {
    try {
      report[await reconcileOne(deps, payment, abandonAfterMs, call)]++;
    } catch (err) {
      report.errors++;
      logError("payment reconciliation failed", err, { payment: payment.id });
    }
  }
  return report;
}

async function reconcileOne(deps: MaybeConnectedDeps, payment: Payment, abandonAfterMs: number, call: () => Promise<boolean>): Promise<Outcome> {
  if (payment.status === "charged") {
    await grantCharged(deps, payment);
    return "completed";
  }
  const { stripe } = deps;
  if (!stripe) return "waiting";
  if (!payment.checkoutSession) {
    await recordLookedAt(deps.d1, payment.id, deps.now());
    if (deps.now() - payment.createdAt < abandonAfterMs) return "waiting";
    await recordFailed(deps.d1, payment.accountId, payment.id);
    return "abandoned";
  }
  if (!(await call())) return "heldBack";
  await recordLookedAt(deps.d1, payment.id, deps.now());
  let session = await stripe.checkout.sessions.retrieve(payment.checkoutSession);
  if (session.status === "open" && session.expires_at * 1000 <= deps.now()) {
    if (!(await call())) return "heldBack";
    session = await stripe.checkout.sessions.expire(session.id);
  }
  const applied = await applySession({ ...deps, stripe }, session);
  return applied.done === "granted" ? "completed" : applied.done === "failed" ? "abandoned" : "waiting";
}

/**
 * The Cron Trigger's run: at most `PAYMENTS_RECONCILE_BATCH` unfinished payments of every account, at
 * most `PAYMENTS_RECONCILE_PER_ACCOUNT` of any one, those looked at least recently first — so no
 * account's open checkouts fill a run and every payment gets its turn. At most two Stripe calls each.
 */
export async function reconcileAllFromEnv(env: Env, s: Settings): Promise<ReconcileReport> {
  const deps = await paymentDeps(env);
  const rows = await unfinishedFairly(env.DB, { limit: s.PAYMENTS_RECONCILE_BATCH, perAccount: s.PAYMENTS_RECONCILE_PER_ACCOUNT });
  return reconcilePayments(deps, rows, s.PAYMENT_ABANDON_AFTER_MS, BY_BATCH);
}

/**
 * A credits page's reconciliation: at most `PAYMENTS_PAGE_RECONCILE` of the account's unfinished
 * payments, the one it came back from (`first`) first, none looked at in the last
 * `PAYMENTS_PAGE_RECHECK_S` (but that one), each Stripe call within `allowance`.
 */
export async function reconcileAccountFromEnv(
  env: Env,
  s: Settings,
  accountId: string,
  opts: { first?: string; allowance: StripeAllowance },
): Promise<ReconcileReport> {
  const deps = await paymentDeps(env);
  const lookedSince = deps.now() - s.PAYMENTS_PAGE_RECHECK_S * 1000;
  const rows = await unfinishedOf(env.DB, accountId, { limit: s.PAYMENTS_PAGE_RECONCILE, first: opts.first, lookedSince });
  return reconcilePayments(deps, rows, s.PAYMENT_ABANDON_AFTER_MS, opts.allowance);
}
