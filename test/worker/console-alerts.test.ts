import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { ledgerFor } from "../../src/ledger/ledger";
import { hashApiKey } from "../../src/keys/api-key";
import { chat, settled, until, user } from "./helpers";
import { createKeyViaConsole, signUp, textOf } from "./console-helpers";

// The console's alerts page (/settings/alerts): thresholds kept in the account's ledger, endpoints with a
// secret shown once, a test event through the queue, the alerts fired and the delivery log; validated on the
// server, scoped to the session's account. And the request path: a key's settle carries its limit to the ledger.

const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const secretIn = (html: string) => /value="(whsec_[0-9a-f]{64})"/.exec(html)?.[1];

describe("/settings/alerts", () => {
  it("saves key and balance thresholds into the ledger; refuses bad ones naming the problem, changing nothing; another account's key is not found", async () => {
    const { client, accountId } = await signUp();
    const { key } = await createKeyViaConsole(client, "agents", "1");
    const hash = hashApiKey(key);
    const page = await client.page("/settings/alerts");
    expect(page.status).toBe(200);
    expect(page.html).toContain('href="/settings/alerts" aria-current="page"');
    expect(textOf(page.html)).toContain("No alert has fired yet");

    expect((await client.post(`/settings/alerts/keys/${hash}`, { thresholds: "80, 50 ,100%" }, { from: "/settings/alerts" })).status).toBe(303);
    expect((await client.post("/settings/alerts/balance", { thresholds: "$5, 0.5" }, { from: "/settings/alerts" })).status).toBe(303);
    const ledger = ledgerFor(env, accountId);
    expect(await ledger.alertRules()).toEqual({ keyPercents: { [hash]: [50, 80, 100] }, balanceBelowNano: [500_000_000, 5_000_000_000] });

    const bad = await client.post(`/settings/alerts/keys/${hash}`, { thresholds: "50, 150" }, { from: "/settings/alerts" });
    expect(bad.status).toBe(400);
    expect(textOf(await bad.text())).toContain("Each threshold is a whole percent from 1 to 100");
    const badBalance = await client.post("/settings/alerts/balance", { thresholds: "-1" }, { from: "/settings/alerts" });
    expect(badBalance.status).toBe(400);
    expect(await ledger.alertRules()).toEqual({ keyPercents: { [hash]: [50, 80, 100] }, balanceBelowNano: [500_000_000, 5_000_000_000] });

    const other = await signUp();
    expect((await other.client.post(`/settings/alerts/keys/${hash}`, { thresholds: "10" }, { from: "/settings/alerts" })).status).toBe(404);
    // Emptied: the key's thresholds are gone.
    expect((await client.post(`/settings/alerts/keys/${hash}`, { thresholds: "" }, { from: "/settings/alerts" })).status).toBe(303);
    expect((await ledger.alertRules()).keyPercents).toEqual({});
  });

  it("adds an endpoint with its secret shown once and stored sealed; sends a test event through the queue into the delivery log; removes it", async () => {
    const { client, accountId } = await signUp();
    const refused = await client.post("/settings/alerts/endpoints", { url: "http://hooks.example.test/x" }, { from: "/settings/alerts" });
    expect(refused.status).toBe(400);
    expect(textOf(await refused.text())).toContain("must be https");

    // The carrier simulator plays the receiver (it answers 404 to this path): the attempt is logged.
    const url = `${env.CARRIER_BASE_URL_OVERRIDE}/alerts-console-receiver`;
    const added = await client.post("/settings/alerts/endpoints", { url }, { from: "/settings/alerts" });
    expect(added.status).toBe(200);
    const html = await added.text();
    const secret = secretIn(html)!;
    expect(secret).toBeDefined();
    expect(textOf(html)).toContain("this is the only time it is shown");
    const row = await env.DB.prepare("SELECT id, secret_sealed, secret_hint FROM alert_endpoints WHERE account_id = ?")
      .bind(accountId)
      .first<{ id: string; secret_sealed: string; secret_hint: string }>();
    expect(row!.secret_sealed).not.toContain(secret.slice(6));
    expect(row!.secret_hint).toBe(secret.slice(-4));
    const again = await client.page("/settings/alerts");
    expect(secretIn(again.html)).toBeUndefined();
    expect(textOf(again.html)).toContain(`whsec_…${secret.slice(-4)}`);

    const other = await signUp();
    expect((await other.client.post(`/settings/alerts/endpoints/${row!.id}/test`, {}, { from: "/settings/alerts" })).status).toBe(404);
    expect((await other.client.post(`/settings/alerts/endpoints/${row!.id}/remove`, {}, { from: "/settings/alerts" })).status).toBe(404);

    const tested = await client.post(`/settings/alerts/endpoints/${row!.id}/test`, {}, { from: "/settings/alerts" });
    expect(tested.status).toBe(303);
    const log = await until(
      async () => textOf((await client.page("/settings/alerts")).html),
      (t) => t.includes("failed (404)"),
    );
    expect(log).toContain("test");
    expect(log).toContain("failed (404) — the endpoint answered 404");

    expect((await client.post(`/settings/alerts/endpoints/${row!.id}/remove`, {}, { from: "/settings/alerts" })).status).toBe(303);
    expect(textOf((await client.page("/settings/alerts?done=removed")).html)).toContain("No endpoints yet");
  });

  it("a request on a key past its threshold fires the alert from the ledger's settle, shown on the page", async () => {
    const { client, accountId } = await signUp();
    const grant = await ledgerFor(env, accountId).grant({ grantId: "test-credits", amountNano: 1_000_000_000, source: "test" });
    expect(grant.applied).toBe(true);
    const { key } = await createKeyViaConsole(client, "tiny", "0.0001"); // $0.0001: 1 % is 1,000 nano-USD
    await client.post(`/settings/alerts/keys/${hashApiKey(key)}`, { thresholds: "1" }, { from: "/settings/alerts" });
    const res = await chat(key, { model: LLAMA, ...user("Hello [sim tokens=40]") });
    expect(res.status).toBe(200);
    const totals = await settled(accountId);
    expect(totals.total_usage).toBeGreaterThan(0.000001);
    const fired = await ledgerFor(env, accountId).alertsFired(10);
    expect(fired.map((f) => f.event)).toEqual([
      expect.objectContaining({
        type: "key.budget_threshold",
        data: expect.objectContaining({ key_hash: hashApiKey(key), threshold_percent: 1, limit_usd: 0.0001, limit_reset: null }),
      }),
    ]);
    expect(textOf((await client.page("/settings/alerts")).html)).toContain("reached 1 % of its $0.0001 limit");
  });
});
