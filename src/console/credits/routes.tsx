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
import { totalsNow } from "../../ledger/usage-now";
import { logError } from "../../log-error";
import { paymentProvider } from "../../payments/connected-provider";
import { recentPayments } from "../../payments/payments-store";
import { ledgerGrant, pay } from "../../payments/payment-flow";
import { reconcileFromEnv } from "../../payments/reconcile";
import { CreditsPage, type AddCreditsState } from "./page";

/** /settings/credits: the balance from the account's ledger Durable Object, and "add credits". */
export const creditRoutes = new Hono<ConsoleEnv>();

const NOTICES = {
  added: "Credits added. The balance below includes them.",
  duplicate: "That payment form had already been submitted; it was processed only once.",
  processing: "Your payment was taken; the credits are being added and will show here shortly.",
} as const;

const PAYMENT_ID = /^pay_[A-Za-z0-9_-]{43}$/;

async function creditsPage(c: Context<ConsoleEnv>, status: ContentfulStatusCode, extra: { form?: AddCreditsState; notice?: string }) {
  const s = c.var.session!;
  const [totals, payments] = await Promise.all([totalsNow(c.env, s.accountId), recentPayments(c.env.DB, s.accountId)]);
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
  // A payment of this account that a crash or a lost reply left unfinished is finished before the balance is read.
  await reconcileFromEnv(c.env, { accountId: c.var.session!.accountId }).catch((err) => logError("credits page reconciliation failed", err));
  const done = c.req.query("done");
  return creditsPage(c, 200, { notice: done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined });
});

/**
 * Add credits: the payment flow (src/payments/payment-flow.ts) under the form's one-time payment id.
 * The same form sent again resumes an unfinished payment, or is told it was processed already.
 */
creditRoutes.post("/settings/credits", ...accountForm, async (c) => {
  const provider = paymentProvider(c.env);
  if (!provider) return renderError(c, 404, "Adding credits is not available", "No payment processor is connected to this deployment.");
  const s = c.var.session!;
  const form = await readForm(c);
  const amountNano = parseUsdInput(form.amount ?? "", 2);
  if (amountNano === undefined || amountNano < provider.minNano || amountNano > provider.maxNano)
    return creditsPage(c, 400, {
      form: { amount: form.amount, errors: { amount: `Enter an amount from ${usd(provider.minNano)} to ${usd(provider.maxNano)}, like 10 or 25.50.` } },
    });
  const paymentId = form.payment_id ?? "";
  if (!PAYMENT_ID.test(paymentId)) return renderError(c, 400, "This form has expired", "Reload the credits page and try again.");

  const outcome = await pay({ d1: c.env.DB, provider, grant: ledgerGrant(c.env) }, { id: paymentId, accountId: s.accountId, amountNano }, form);
  switch (outcome.kind) {
    case "added":
      return c.redirect("/settings/credits?done=added", 303);
    case "processing":
      return c.redirect("/settings/credits?done=processing", 303);
    case "declined":
      return creditsPage(c, 402, { form: { amount: form.amount, problem: outcome.message } });
    case "done-before":
    case "not-yours":
      return c.redirect("/settings/credits?done=duplicate", 303);
  }
});
