import type { Env } from "../../env";
import { logWarning } from "../../log-error";
import type { Settings } from "../../settings";

/** The settings these allowances read (the request's, read once). */
export type StripeCallLimits = Pick<Settings, "STRIPE_CALLS_PER_ACCOUNT_MINUTE" | "STRIPE_PAGE_CALLS_PER_MINUTE">;

/**
 * How many Stripe API calls the console may make now: each call spends the deployment's Stripe rate
 * limit, and a page load or a form post is the caller's to repeat as often as they like. Counted by `RateLimiterObject`s over a sliding minute: one per account for every
 * call made for its requests (`STRIPE_CALLS_PER_ACCOUNT_MINUTE`), and one for the deployment for the
 * calls credits pages make to reconcile (`STRIPE_PAGE_CALLS_PER_MINUTE`): no account, nor many, can make
 * pages spend more. The Cron Trigger's calls are bounded by its batch instead; webhooks' by Stripe's events.
 */
const MINUTE_MS = 60_000;
const PAGE_COUNTER = "stripe-calls:credits-pages";

const counter = (env: Env, name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));

/** Takes up to `wanted` of the account's calls: how many it may make (0 = none now). */
export async function takeAccountStripeCalls(env: Env, limits: StripeCallLimits, accountId: string, wanted: number): Promise<number> {
  const granted = wanted > 0 ? await counter(env, `stripe-calls:account:${accountId}`).takeUpTo(wanted, limits.STRIPE_CALLS_PER_ACCOUNT_MINUTE, MINUTE_MS) : 0;
  if (granted < wanted) logWarning("stripe calls held back: the account's allowance is spent", { account: accountId, wanted, granted });
  return granted;
}

/** Takes up to `wanted` calls for a credits page's reconciliation: within the account's allowance and the deployment's. */
export async function takePageStripeCalls(env: Env, limits: StripeCallLimits, accountId: string, wanted: number): Promise<number> {
  const mine = await takeAccountStripeCalls(env, limits, accountId, wanted);
  if (mine === 0) return 0;
  const granted = await counter(env, PAGE_COUNTER).takeUpTo(mine, limits.STRIPE_PAGE_CALLS_PER_MINUTE, MINUTE_MS);
  if (granted < mine) logWarning("stripe calls held back: credits pages' allowance is spent", { account: accountId, wanted: mine, granted });
  return granted;
}

/** The calls credits pages made to reconcile in the last minute (the Cron Trigger logs it beside its own). */
export function pageStripeCallsLastMinute(env: Env): Promise<number> {
  return counter(env, PAGE_COUNTER).count(MINUTE_MS);
}
