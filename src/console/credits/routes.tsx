import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ConsoleEnv } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { parseUsdInput } from "../http/usd-input";
import { randomToken } from "../http/encoding";
import { pageMeta, render, renderError } from "../layout/render";
import { usd } from "../layout/format";
import { csrfToken } from "../auth/csrf-token";
import { ledgerFor } from "../../ledger/ledger";
import { paymentProvider } from "./payment-provider";
import { beginPayment, finishPayment, recentPayments } from "./payments-store";
import { CreditsPage, type AddCreditsState } from "./page";

/** /settings/credits: the balance from the account's ledger Durable Object, and "add credits". */
export const creditRoutes = new Hono<ConsoleEnv>();

const NOTICES = {
  added: "Credits added. The balance below includes them.",
  duplicate: "That payment form had already been submitted; it was processed only once.",
} as const;

const PAYMENT_ID = /^pay_[A-Za-z0-9_-]{43}$/;

async function creditsPage(c: Context<ConsoleEnv>, status: ContentfulStatusCode, extra: { form?: AddCreditsState; notice?: string }) {
  const s = c.var.session!;
  const [totals, payments] = await Promise.all([ledgerFor(c.env, s.accountId).totals(), recentPayments(c.env.DB, s.accountId)]);
  return render(
    c,
    <CreditsPage
      meta={await pageMeta(c, "Credits")}
      csrf={await csrfToken(s.token)}
      totals={totals}
      provider={paymentProvider(c.env)}
      paymentId={`pay_${randomToken()}`}
      payments={payments}
      {...extra}
    />,
    status,
  );
}

creditRoutes.get("/settings/credits", ...accountPage, async (c) => {
  const done = c.req.query("done");
  return creditsPage(c, 200, { notice: done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined });
});

/**
 * Add credits: record the attempt under the form's one-time id, charge through the provider, then
 * grant the amount in the account's ledger — the same `grant` the operator's admin API uses.
 */
creditRoutes.post("/settings/credits", ...accountForm, async (c) => {
  const provider = paymentProvider(c.env);
  if (!provider) return renderError(c, 404, "Adding credits is not available", "No payment processor is connected to this deployment.");
  const s = c.var.session!;
  const form = await readForm(c);
  const amountNano = parseUsdInput(form.amount ?? "", 2);
  if (amountNano === undefined || amountNano < provider.minNano || amountNano > provider.maxNano)
    return creditsPage(c, 400, { form: { amount: form.amount, errors: { amount: `Enter an amount from ${usd(provider.minNano)} to ${usd(provider.maxNano)}, like 10 or 25.50.` } } });
  const paymentId = form.payment_id ?? "";
  if (!PAYMENT_ID.test(paymentId)) return renderError(c, 400, "This form has expired", "Reload the credits page and try again.");

  if (!(await beginPayment(c.env.DB, { id: paymentId, accountId: s.accountId, provider: provider.id, amountNano }))) return c.redirect("/settings/credits?done=duplicate", 303);
  const result = await provider.charge({ id: paymentId, accountId: s.accountId, amountNano }, form);
  if (!result.ok) {
    await finishPayment(c.env.DB, s.accountId, paymentId, "declined", null);
    return creditsPage(c, 402, { form: { amount: form.amount, problem: result.message } });
  }
  try {
    await ledgerFor(c.env, s.accountId).grant({ grantId: `payment:${paymentId}`, amountNano, source: "console-payment" });
  } catch (err) {
    await finishPayment(c.env.DB, s.accountId, paymentId, "failed", result.reference);
    throw err;
  }
  await finishPayment(c.env.DB, s.accountId, paymentId, "succeeded", result.reference);
  return c.redirect("/settings/credits?done=added", 303);
});
