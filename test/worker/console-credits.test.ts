import { describe, it, expect } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { admin, chat, newAccount, settled, user, type Totals } from "./helpers";
import { ConsoleClient, createKeyViaConsole, signUp, textOf } from "./console-helpers";
import { STRIPE, checkout, paySession, reviewForm } from "./stripe-helpers";
import { app } from "../../src/app";

const totals = (accountId: string) => admin<Totals>(`/accounts/${accountId}`);
const figureOf = (text: string) => /Total credits (\$[\d,.]+)/.exec(text)?.[1];
const figure = (html: string, id: string) => textOf(new RegExp(`<p class="figure"[^>]*id="${id}">([^<]*)</p>`).exec(html)?.[1] ?? "");

type PaymentRow = { id: string; account_id: string; provider: string; amount_nano: number; status: string; reference: string | null };
const payments = async (accountId: string) =>
  (await env.DB.prepare("SELECT * FROM payments WHERE account_id = ? ORDER BY created_at").bind(accountId).all<PaymentRow>()).results;

describe("/settings/credits", () => {
  it("shows balance, total credits and total usage from the account's ledger, and the drop after a request", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 10 });
    let html = (await client.page("/settings/credits")).html;
    expect(figure(html, "balance")).toBe("$10.00");
    expect(figure(html, "total-credits")).toBe("$10.00");
    expect(figure(html, "total-usage")).toBe("$0.00");

    const { key } = await createKeyViaConsole(client, "spend");
    const res = await chat(key, { model: "openai/gpt-oss-20b", ...user("spend a little [sim tokens=50]") });
    const cost = ((await res.json()) as { usage: { cost: number } }).usage.cost;
    const t = await settled(accountId);
    const usageNano = Math.round(t.total_usage * 1e9);
    expect(usageNano).toBe(Math.round(cost * 1e9));
    html = (await client.page("/settings/credits")).html;
    const exact = (nano: number) => `$${(nano / 1e9).toFixed(9).replace(/0+$/, "")}`;
    expect(figure(html, "total-usage")).toBe(exact(usageNano));
    expect(figure(html, "balance")).toBe(exact(10e9 - usageNano));
    expect(figure(html, "total-credits")).toBe("$10.00");
  });

  it("the fee is shown before paying: the rule on the page, then credits, fee and total for the amount typed", async () => {
    const { client } = await signUp();
    const loaded = await client.page("/settings/credits");
    const page = textOf(loaded.html);
    // The pay form's redirect leads to Stripe's checkout: the CSP lets this page's forms go there, and no other page's.
    expect(loaded.res.headers.get("content-security-policy")).toContain(`form-action 'self' ${STRIPE}`);
    expect((await client.page("/settings/keys")).res.headers.get("content-security-policy")).toContain("form-action 'self';");
    expect(page).toContain("A platform fee (5.5 %, at least $0.80) is added to the credits you buy");
    expect(page).toContain("Local test mode — the Stripe simulator.");
    expect(page).toContain("From $5.00 to $1000.00, in whole cents.");
    for (const [amount, fee, total] of [
      ["10", "$0.80", "$10.80"], // 5.5 % is 55 cents: the minimum applies
      ["25", "$1.38", "$26.38"], // 137.5 cents, rounded up
      ["1000", "$55.00", "$1055.00"],
      ["14.99", "$0.83", "$15.82"],
    ]) {
      const { html } = await reviewForm(client, amount!);
      const review = textOf(/<dl class="facts" id="payment-review">([\s\S]*?)<\/dl>/.exec(html)![1]!).trim();
      expect(review).toBe(`Credits added to your balance $${Number(amount).toFixed(2)} Platform fee (5.5 %, at least $0.80) ${fee} Total charged ${total}`);
      expect(textOf(html)).toContain(`Pay ${total} with Stripe`);
    }
  });

  it("an amount out of range or not in whole cents gets a 400 naming the range, and no payment", async () => {
    const { client, accountId } = await signUp();
    for (const amount of ["4.99", "1000.01", "10.001", "ten", "-5", ""]) {
      const { status, html } = await client.page(`/settings/credits?amount=${encodeURIComponent(amount)}`);
      expect(status).toBe(400);
      expect(textOf(html)).toContain("Enter an amount from $5.00 to $1000.00, like 10 or 25.50.");
      expect(html).not.toContain('name="payment_id"');
    }
    const form = await reviewForm(client, "10");
    const res = await client.post("/settings/credits", { payment_id: form.paymentId, amount: "2000" }, { csrf: form.csrf });
    expect(res.status).toBe(400);
    expect(await payments(accountId)).toEqual([]);
  });

  it("recent payments show credits and fee apart, the method and what became of each", async () => {
    const { client } = await signUp();
    const paid = await checkout(client, "12");
    await paySession(paid.sessionId);
    await checkout(client, "6"); // left open
    const html = textOf((await client.page("/settings/credits")).html);
    expect(html).toMatch(/\$6\.00 \$0\.80 Stripe Awaiting payment/);
    expect(html).toMatch(/\$12\.00 \$0\.80 Stripe Succeeded/); // the page load asked Stripe and granted it
    expect(figureOf(html)).toBe("$12.00");
  });

  it("CSRF: a forged pay POST is refused and starts nothing", async () => {
    const { client, accountId } = await signUp();
    const form = await reviewForm(client, "10");
    expect((await client.post("/settings/credits", { payment_id: form.paymentId, amount: "10" }, { csrf: null })).status).toBe(403);
    expect(
      (await client.post("/settings/credits", { payment_id: form.paymentId, amount: "10" }, { csrf: form.csrf, headers: { "sec-fetch-site": "cross-site" } }))
        .status,
    ).toBe(403);
    expect((await totals(accountId)).total_credits).toBe(0);
    expect(await payments(accountId)).toEqual([]);
  });

  it("payments are off without Stripe's secrets: the page says adding credits is not available; a POST and the webhook answer 404", async () => {
    const offEnv = { ...env, STRIPE_SECRET_KEY: undefined };
    const viaApp = async (req: Request) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(req, offEnv, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
    const { client: on, accountId } = await signUp();
    const off = new ConsoleClient(on.ip, on.origin, viaApp);
    for (const [k, v] of on.cookies) off.cookies.set(k, v);
    const html = (await off.page("/settings/credits?amount=10")).html;
    expect(textOf(html)).toContain("Adding credits is not available on this deployment.");
    expect(html).not.toContain('name="payment_id"');
    const res = await off.post("/settings/credits", { payment_id: `pay_${"a".repeat(43)}`, amount: "10" }, { from: "/settings/keys" });
    expect(res.status).toBe(404);
    expect(
      (await viaApp(new Request("https://switchyard.test/webhooks/stripe", { method: "POST", body: "{}", headers: { "stripe-signature": "t=1,v1=0" } })))
        .status,
    ).toBe(404);
    expect(await payments(accountId)).toEqual([]);
  });

  it("another account's balance and payments are never shown, and its payment id is never acted on", async () => {
    await newAccount(777);
    const other = await signUp();
    const theirs = await checkout(other.client, "33.33");
    const { client, accountId } = await signUp();
    const html = (await client.page("/settings/credits")).html;
    // Amounts are shown as "$…": the other account's $777.00 credits and $33.33 payment never appear.
    expect(html).not.toContain("$777");
    expect(html).not.toContain("$33.33");
    expect(html).not.toContain("Recent payments");
    expect(figure(html, "total-credits")).toBe("$0.00");
    // Its payment id in this account's form, or on this account's return from checkout, does nothing.
    const form = await reviewForm(client, "50");
    const res = await client.post("/settings/credits", { payment_id: theirs.paymentId, amount: "50" }, { csrf: form.csrf });
    expect(res.headers.get("location")).toBe("/settings/credits?done=duplicate");
    await paySession(theirs.sessionId);
    expect(textOf((await client.page(`/settings/credits?checkout=${theirs.paymentId}`)).html)).not.toContain("Payment received");
    expect(textOf((await client.page(`/settings/credits?cancelled=${theirs.paymentId}`)).html)).not.toContain("Checkout cancelled");
    expect(await payments(accountId)).toEqual([]);
    expect((await totals(accountId)).total_credits).toBe(0);
    // The other account's own page load finishes its payment: the cancel link above touched nothing of it.
    await other.client.page("/settings/credits");
    expect((await totals(other.accountId)).total_credits).toBe(33.33);
  });
});
