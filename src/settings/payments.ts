import { count, between, decimal, text } from "./spec";

/** Payments: Stripe, checkout limits, the platform fee. */
export const PAYMENTS_SETTINGS = {
  PAYMENT_ABANDON_AFTER_MS: count(
    900_000,
    "a payment whose Checkout Session was never created (the call failed or its reply was lost) is given up (`failed`) by reconciliation after this long, ms",
    "900000 = 15 min",
  ),
  PAYMENT_CHECKOUT_EXPIRY_S: between(
    1_800,
    86_400,
    count(3_600, "a Checkout Session not paid within this long expires at Stripe (which allows 1800 to 86400), and its payment fails, s", "3600 = 1 h"),
  ),
  STRIPE_WEBHOOK_MAX_BYTES: count(1024 * 1024, "largest Stripe webhook body read; a larger one is refused with 413", "1048576 = 1 MiB"),
  PAYMENTS_RECONCILE_BATCH: count(100, "most unfinished payments one Cron Trigger run looks at, those Stripe was asked about least recently first"),
  PAYMENTS_RECONCILE_PER_ACCOUNT: count(3, "most payments of one account one Cron Trigger run looks at: no account's open checkouts fill a run"),
  PAYMENTS_PAGE_RECONCILE: count(
    3,
    "most unfinished payments of its account one credits page load asks Stripe about (the one just paid first); the Cron Trigger finishes the rest",
  ),
  PAYMENTS_PAGE_RECHECK_S: count(
    60,
    "a credits page asks Stripe about one unfinished payment at most once in this long (the one it came back from always): reloading the page asks nothing again, s",
  ),
  PAYMENT_MAX_OPEN_CHECKOUTS: count(
    5,
    "most checkouts one account may have unfinished at once; one more is refused (429) on the credits page until one is paid, cancelled or expires",
  ),
  PAYMENT_MAX_CHECKOUTS_PER_HOUR: count(10, "most checkouts one account may start in any 60 minutes; one more is refused (429) on the credits page"),
  STRIPE_CALLS_PER_ACCOUNT_MINUTE: count(
    30,
    "most Stripe API calls the console makes for one account in any minute (starting, resuming, cancelling a checkout; its page's reconciliation); over it a checkout is refused (429) and the page shows what it knows",
  ),
  STRIPE_PAGE_CALLS_PER_MINUTE: count(
    300,
    "most Stripe API calls all credits page loads together make for reconciliation in any minute; over it pages skip asking and the Cron Trigger finishes their payments",
  ),
  STRIPE_SECRET_KEY: text(
    "secret",
    "Stripe's secret key (`sk_live_…`, `sk_test_…`): with `STRIPE_WEBHOOK_SECRET`, the console sells credits through Stripe Checkout; unset = adding credits is off",
  ),
  STRIPE_WEBHOOK_SECRET: text(
    "secret",
    "the signing secret (`whsec_…`) of the Stripe webhook endpoint `<origin>/webhooks/stripe`: only events signed with it are acted on",
  ),
  STRIPE_API_URL: text(
    "var, local only",
    "sends Stripe API calls to this `http://host:port` (the Stripe simulator `npm start` runs) instead of api.stripe.com",
  ),
  PAYMENT_MIN_USD: count(5, "smallest amount of credits one payment may buy, whole USD"),
  PAYMENT_MAX_USD: count(1000, "largest amount of credits one payment may buy, whole USD"),
  PLATFORM_FEE_PERCENT: decimal(
    5.5,
    "the platform fee added to a credits purchase at checkout, percent of the credits (shown before paying, recorded apart from the credits)",
  ),
  PLATFORM_FEE_MIN_USD: decimal(0.8, "the smallest platform fee, USD (cents)"),
};
