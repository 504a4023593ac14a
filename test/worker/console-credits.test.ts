import { describe, it, expect } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { admin, chat, newAccount, settled, user, type Totals } from "./helpers";
import { ConsoleClient, createKeyViaConsole, signUp, textOf, uniqueEmail } from "./console-helpers";
import { app } from "../../src/app";

const CARD = { card_number: "4242 4242 4242 4242", card_expiry: "12/40", card_cvc: "123" };
/** A test card number, spaced or not. */
const CARD_NUMBER = /4242[\s-]?4242[\s-]?4242[\s-]?4242|4000[\s-]?0000[\s-]?0000[\s-]?0002/;
const totals = (accountId: string) => admin<Totals>(`/accounts/${accountId}`);
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

  it("test mode: the page says so plainly; the test card adds exactly the amount to the ledger, once per form", async () => {
    const { client, accountId } = await signUp();
    const page = (await client.page("/settings/credits")).html;
    expect(textOf(page)).toContain("Test mode — no real payments.");
    expect(textOf(page)).toContain("4242 4242 4242 4242");
    const paymentId = /name="payment_id" value="([^"]+)"/.exec(page)![1]!;

    const res = await client.post("/settings/credits", { payment_id: paymentId, amount: "12.34", ...CARD }, { from: "/settings/credits" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/settings/credits?done=added");
    let t = await totals(accountId);
    expect(t.total_credits).toBe(12.34);
    expect(t.balance).toBe(12.34);
    const after = (await client.page("/settings/credits?done=added")).html;
    expect(textOf(after)).toContain("Credits added.");
    expect(figure(after, "balance")).toBe("$12.34");
    expect(textOf(after)).toMatch(/\$12\.34 Test card Succeeded/);

    // The same form again (a double click, a resubmission) pays nothing more.
    const again = await client.post("/settings/credits", { payment_id: paymentId, amount: "12.34", ...CARD }, { from: "/settings/credits" });
    expect(again.headers.get("location")).toBe("/settings/credits?done=duplicate");
    t = await totals(accountId);
    expect(t.total_credits).toBe(12.34);

    const rows = await payments(accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: paymentId, provider: "test-card", amount_nano: 12_340_000_000, status: "succeeded" });
    // Only the processor's reference is kept, never card data (random ids may contain any digits, so look for card numbers).
    expect(Object.keys(rows[0]!).sort()).toEqual(["account_id", "amount_nano", "created_at", "id", "provider", "reference", "status"]);
    expect(rows[0]!.reference).toMatch(/^test_[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(rows)).not.toMatch(CARD_NUMBER);

    // The API sees the same money.
    const { key } = await createKeyViaConsole(client, "k");
    const credits = await (await chat(key, { model: "openai/gpt-oss-20b", ...user("x") })).json();
    expect(credits).toMatchObject({ object: "chat.completion" });
  });

  it("a declined card, a non-test card, bad card fields and out-of-range amounts add nothing", async () => {
    const { client, accountId } = await signUp();
    const cases: [Record<string, string>, number, string][] = [
      [{ ...CARD, card_number: "4000 0000 0000 0002" }, 402, "The card was declined."],
      [{ ...CARD, card_number: "5555 5555 5555 4444" }, 402, "Test mode accepts only the test card"],
      [{ ...CARD, card_expiry: "01/20" }, 402, "Enter an expiry date in the future"],
      [{ ...CARD, card_cvc: "1" }, 402, "Enter the 3 or 4 digit CVC."],
      [{ ...CARD, amount: "0.5" }, 400, "Enter an amount from $1.00 to $1000.00"],
      [{ ...CARD, amount: "1000.01" }, 400, "Enter an amount from $1.00 to $1000.00"],
      [{ ...CARD, amount: "5.001" }, 400, "Enter an amount from $1.00 to $1000.00"],
      [{ ...CARD, amount: "ten" }, 400, "Enter an amount from $1.00 to $1000.00"],
    ];
    for (const [fields, status, message] of cases) {
      const page = (await client.page("/settings/credits")).html;
      const paymentId = /name="payment_id" value="([^"]+)"/.exec(page)![1]!;
      const res = await client.post("/settings/credits", { payment_id: paymentId, amount: "10", ...fields }, { from: "/settings/credits" });
      expect(res.status, message).toBe(status);
      expect(textOf(await res.text())).toContain(message);
    }
    expect((await totals(accountId)).total_credits).toBe(0);
    const rows = await payments(accountId);
    expect(rows.map((r) => r.status)).toEqual(["declined", "declined", "declined", "declined"]);
  });

  it("CSRF: a forged add-credits POST is refused and adds nothing", async () => {
    const { client, accountId } = await signUp();
    const paymentId = /name="payment_id" value="([^"]+)"/.exec((await client.page("/settings/credits")).html)![1]!;
    expect((await client.post("/settings/credits", { payment_id: paymentId, amount: "10", ...CARD }, { csrf: null })).status).toBe(403);
    expect(
      (
        await client.post(
          "/settings/credits",
          { payment_id: paymentId, amount: "10", ...CARD },
          { from: "/settings/credits", headers: { "sec-fetch-site": "cross-site" } },
        )
      ).status,
    ).toBe(403);
    expect((await totals(accountId)).total_credits).toBe(0);
    expect(await payments(accountId)).toEqual([]);
  });

  it("payments are off unless PAYMENTS_TEST_MODE is on: the page says adding credits is not available, and a POST adds nothing", async () => {
    const offEnv = { ...env, PAYMENTS_TEST_MODE: undefined };
    const viaApp = async (req: Request) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(req, offEnv, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
    // The email carries the digits the assertions look for, so only card data on the page could fail them.
    const { client: on, accountId } = await signUp(uniqueEmail().replace("console", "console4242-"));
    const off = new ConsoleClient(on.ip, on.origin, viaApp);
    for (const [k, v] of on.cookies) off.cookies.set(k, v);
    const html = (await off.page("/settings/credits")).html;
    expect(textOf(html)).toContain("Adding credits is not available on this deployment.");
    expect(html).not.toContain('action="/settings/credits"');
    expect(textOf(html)).not.toMatch(CARD_NUMBER);
    const res = await off.post("/settings/credits", { payment_id: `pay_${"a".repeat(43)}`, amount: "10", ...CARD }, { from: "/settings/keys" });
    expect(res.status).toBe(404);
    expect((await totals(accountId)).total_credits).toBe(0);
    expect(await payments(accountId)).toEqual([]);
  });

  it("another account's balance and payments are never shown", async () => {
    await newAccount(777);
    const other = await signUp();
    const otherPage = (await other.client.page("/settings/credits")).html;
    const otherPayment = /name="payment_id" value="([^"]+)"/.exec(otherPage)![1]!;
    expect((await other.client.post("/settings/credits", { payment_id: otherPayment, amount: "33.33", ...CARD }, { from: "/settings/credits" })).status).toBe(
      303,
    );

    const { client } = await signUp(uniqueEmail().replace("console", "console777-33.33-"));
    const html = (await client.page("/settings/credits")).html;
    // Amounts are shown as "$…": the other account's $777.00 credits and $33.33 payment never appear.
    expect(html).not.toContain("$777");
    expect(html).not.toContain("$33.33");
    expect(html).not.toContain("Recent payments");
    expect(figure(html, "total-credits")).toBe("$0.00");
    // Reusing the other account's payment id adds nothing to either account.
    const res = await client.post("/settings/credits", { payment_id: otherPayment, amount: "50", ...CARD }, { from: "/settings/credits" });
    expect(res.headers.get("location")).toBe("/settings/credits?done=duplicate");
    expect(figure((await client.page("/settings/credits")).html, "total-credits")).toBe("$0.00");
    expect((await totals(other.accountId)).total_credits).toBe(33.33);
  });
});
