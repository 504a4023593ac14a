import { allowed } from "../http/roles";
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ConsoleEnv } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { parseUsdInput } from "../http/usd-input";
import { randomToken } from "../http/encoding";
import { pageMeta, render, renderError } from "../layout/render";
import { usd, utcDateTime } from "../layout/format";
import { csrfToken } from "../auth/csrf-token";
import { totalsNow } from "../../ledger/usage-now";
import { logError } from "../../log-error";
import type { Settings } from "../../settings";
import { cancelCheckout, startCheckout, type CheckoutOutcome } from "../../payments/checkout";
import { NANO_PER_CENT, paymentTerms, quote, type Quote } from "../../payments/payment-terms";
import { findPayment, recentPayments } from "../../payments/payments-store";
import { reconcileAccountFromEnv } from "../../payments/reconcile";
import { connectedPaymentDeps } from "../../payments/grant-payment";
import { checkoutOrigin, paymentsEnabled } from "../../payments/stripe-client";
import { CreditsPage, type AddCreditsState, type PaymentsMode } from "./page";
import { takeAccountStripeCalls, takePageStripeCalls } from "./stripe-allowance";

/** /settings/credits: the balance from the account's ledger Durable Object, and buying credits through Stripe Checkout. */
export const creditRoutes = new Hono<ConsoleEnv>();

const NOTICES = {
  duplicate: "That payment form had already been used; it was processed only once.",
  expired: "That payment form is too old to pay with; nothing was charged. Start again below.",
  cancelled: "Checkout cancelled. Nothing was charged.",
} as const;

const PAYMENT_ID = /^pay_[A-Za-z0-9_-]{43}$/;

function paymentsMode(s: Settings): PaymentsMode | null {
  if (!paymentsEnabled(s)) return null;
  const mode = s.STRIPE_API_URL ? "simulator" : s.STRIPE_SECRET_KEY!.startsWith("sk_live_") ? "live" : "test";
  return { terms: paymentTerms(s), mode };
}

/** The amount typed → its priced quote, or the message saying what amounts are allowed. */
function priced(s: Settings, amount: string | undefined): { quote: Quote } | { error: string } {
  const terms = paymentTerms(s);
  const nano = parseUsdInput(amount ?? "", 2);
  const cents = nano === undefined ? undefined : nano / NANO_PER_CENT;
  if (cents === undefined || cents < terms.minCents || cents > terms.maxCents)
    return { error: `Enter an amount from ${usd(terms.minCents * NANO_PER_CENT)} to ${usd(terms.maxCents * NANO_PER_CENT)}, like 10 or 25.50.` };
  return { quote: quote(terms, cents) };
}

async function creditsPage(c: Context<ConsoleEnv>, status: ContentfulStatusCode, extra: { form?: AddCreditsState; notice?: string }) {
  const s = c.var.session!;
  if (paymentsEnabled(c.var.settings)) c.set("formTargets", [checkoutOrigin(c.var.settings)]);
  const [totals, recent] = await Promise.all([totalsNow(c.env, s.accountId), recentPayments(c.env.DB, s.accountId)]);
  return render(
    c,
    <CreditsPage
      meta={await pageMeta(c, "Credits")}
      csrf={await csrfToken(s.token)}
      totals={totals}
      payments={paymentsMode(c.var.settings)}
      mayBuy={allowed(s, "credits.buy")}
      paymentId={`pay_${randomToken()}`}
      recent={recent}
      {...extra}
    />,
    status,
  );
}

/** What the page says when the person comes back from Stripe's checkout for this account's payment `id` (paid, or cancelled). */
async function returnNotice(c: Context<ConsoleEnv>, id: string, cancelled: boolean): Promise<string | undefined> {
  const payment = PAYMENT_ID.test(id) ? await findPayment(c.env.DB, id, c.var.session!.accountId) : undefined;
  if (!payment) return undefined;
  if (payment.status === "succeeded") return `Payment received: ${usd(payment.amountNano)} of credits added. The balance below includes them.`;
  if (payment.status === "failed" || (cancelled && payment.status === "pending")) return NOTICES.cancelled;
  return "Payment received by Stripe; your credits are being added and will show here in a moment (reload the page).";
}

creditRoutes.get("/settings/credits", ...accountPage, async (c) => {
  const accountId = c.var.session!.accountId;
  const cancelled = c.req.query("cancelled");
  // Cancelling a checkout (Stripe's cancel link back here) is buying's business: a role that only reads credits leaves it open.
  if (cancelled && PAYMENT_ID.test(cancelled) && allowed(c.var.session!, "credits.buy")) {
    const deps = await connectedPaymentDeps(c.env);
    const allowance = (n: number) => takeAccountStripeCalls(c.env, c.var.settings, accountId, n);
    if (deps) await cancelCheckout(deps, accountId, cancelled, allowance).catch((err: unknown) => logError("checkout cancel failed", err));
  }
  const returned = c.req.query("checkout") ?? cancelled;
  // A payment of this account that a lost webhook, a crash or a lost reply left unfinished is finished before the balance is read:
  // a few of them (the one it came back from first), within the Stripe calls pages may make (the Cron Trigger finishes the rest).
  const allowance = (n: number) => takePageStripeCalls(c.env, c.var.settings, accountId, n);
  await reconcileAccountFromEnv(c.env, c.var.settings, accountId, { first: returned, allowance }).catch((err: unknown) =>
    logError("credits page reconciliation failed", err),
  );
  const done = c.req.query("done");
  const notice = returned
    ? await returnNotice(c, returned, returned === cancelled)
    : done !== undefined && Object.hasOwn(NOTICES, done)
      ? NOTICES[done as keyof typeof NOTICES]
      : undefined;
  const amount = c.req.query("amount");
  if (amount === undefined || !paymentsMode(c.var.settings)) return creditsPage(c, 200, { notice });
  const p = priced(c.var.settings, amount);
  return "error" in p ? creditsPage(c, 400, { notice, form: { amount, error: p.error } }) : creditsPage(c, 200, { notice, form: { amount, review: p.quote } });
});

/** Why a checkout was not started, in words for the page (a limit of this account: 429), or null. */
function refusal(s: Settings, outcome: CheckoutOutcome): string | null {
  const nothing = "Nothing was charged.";
  if (outcome.kind === "too-many-open")
    return (
      `This account has ${outcome.open} checkouts not finished, the most it may have open (${s.PAYMENT_MAX_OPEN_CHECKOUTS}). ` +
      `Pay or cancel one of them under Recent payments, or wait until the oldest expires (${utcDateTime(outcome.oldestExpiresAt)}). ${nothing}`
    );
  if (outcome.kind === "too-many-this-hour")
    return `This account started ${s.PAYMENT_MAX_CHECKOUTS_PER_HOUR} checkouts in the last hour, the most allowed; you can start another at ${utcDateTime(outcome.retryAt)}. ${nothing}`;
  if (outcome.kind === "busy") return `Too many payment requests for this account in the last minute. ${nothing} Try again in a minute.`;
  return null;
}

/**
 * Pay: the reviewed amount goes to a Stripe Checkout Session under the form's one-time payment id, and
 * the person to Stripe's page. The same form sent again goes back to the same session, or is told it
 * was used already. Credits come from Stripe's signed webhook or reconciliation, never from here.
 */
creditRoutes.post("/settings/credits", ...accountForm, async (c) => {
  const deps = await connectedPaymentDeps(c.env);
  if (!deps) return renderError(c, 404, "Adding credits is not available", "No payment processor is connected to this deployment.");
  const form = await readForm(c);
  const p = priced(c.var.settings, form.amount);
  if ("error" in p) return creditsPage(c, 400, { form: { amount: form.amount, error: p.error } });
  const paymentId = form.payment_id ?? "";
  if (!PAYMENT_ID.test(paymentId)) return renderError(c, 400, "This form has expired", "Reload the credits page and try again.");
  const s = c.var.session!;
  try {
    const set = c.var.settings;
    const outcome = await startCheckout(deps, {
      paymentId,
      accountId: s.accountId,
      email: s.email,
      quote: p.quote,
      origin: new URL(c.req.url).origin,
      expiryS: set.PAYMENT_CHECKOUT_EXPIRY_S,
      limits: { maxOpen: set.PAYMENT_MAX_OPEN_CHECKOUTS, maxPerHour: set.PAYMENT_MAX_CHECKOUTS_PER_HOUR },
      allowance: (n) => takeAccountStripeCalls(c.env, c.var.settings, s.accountId, n),
    });
    if (outcome.kind === "redirect") return c.redirect(outcome.url, 303);
    const refused = refusal(c.var.settings, outcome);
    if (refused) return creditsPage(c, 429, { form: { amount: form.amount, review: p.quote, problem: refused } });
    return c.redirect(`/settings/credits?done=${outcome.kind === "expired" ? "expired" : "duplicate"}`, 303);
  } catch (err) {
    logError("stripe checkout could not start", err);
    return creditsPage(c, 502, {
      form: { amount: form.amount, review: p.quote, problem: "Stripe could not start the checkout just now. Nothing was charged; try again in a moment." },
    });
  }
});
