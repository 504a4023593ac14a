import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import type { Page } from "playwright-core";
import { startLocalService, freePort, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";
import { launchChromium, SCREENSHOTS, watchedPage, type Chromium } from "./chromium.ts";

// The console's signed webhooks in Chromium, on a receiver this test runs. The alerts page: a key's thresholds,
// an endpoint (its secret shown once), a test event; then requests drive the key across 50 and 80 % and the
// receiver gets each alert once, signed, verified with the snippet docs/teams.md gives; the page lists the
// alerts and the delivery log. The trace export page: a webhook destination, a request's record delivered
// signed, the delivery in the destination's log.
let service: LocalService;
let browser: Chromium;
let receiver: Server;
let receiverUrl: string;
let tracesUrl: string;
let state: string;
const problems: string[] = [];
const received: Array<{ path: string; signature: string; body: string }> = [];
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

/** docs/teams.md's verification, as a receiver in Node writes it. */
function verify(secret: string, header: string, rawBody: string, toleranceS = 300): boolean {
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=") as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceS) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-alerts-"));
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      received.push({ path: req.url ?? "", signature: String(req.headers["switchyard-signature"] ?? ""), body });
      res.writeHead(200).end("ok");
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${port}/hooks/switchyard`;
  tracesUrl = `http://127.0.0.1:${port}/hooks/traces`;
  service = await startLocalService({ port: 0, persistTo: join(state, "wrangler"), quiet: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await new Promise((r) => receiver?.close(r));
  if (state) rmSync(state, { recursive: true, force: true });
});

const newPage = (): Promise<Page> => watchedPage(browser, problems);

/** Bounded: waits for the receiver to hold `n` events of `type`. */
async function receivedOf(type: string, n: number, ms = 30_000) {
  const of = () =>
    received
      .filter((r) => r.path === "/hooks/switchyard")
      .map((r) => ({ ...r, event: JSON.parse(r.body) as { id: string; type: string; data: Record<string, unknown> } }))
      .filter((r) => r.event.type === type);
  const deadline = Date.now() + ms;
  while (of().length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return of();
}

describe("the alerts page", () => {
  it("thresholds, an endpoint with its secret shown once, a test event, a key driven across 50 and 80 %: each alert once, signed", async () => {
    const email = `alerts-${Date.now()}@example.test`;
    const page = await newPage();
    await page.goto(service.url + "/sign-up");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("a long chosen password");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/settings/keys");
    const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
    const account = await admin.request<{ id: string }>("GET", `/accounts/${encodeURIComponent(email)}`);
    await admin.request("POST", `/accounts/${account.id}/credits`, { usd: 1 });
    const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: account.id, label: "coding agent", limit: 0.0001 });

    await page.getByRole("link", { name: "Alerts", exact: true }).click();
    await page.waitForURL("**/settings/alerts");
    await page.getByLabel(/^coding agent/).fill("50, 150");
    await page.getByRole("button", { name: "Save thresholds of coding agent" }).click();
    expect(await page.getByText("Each threshold is a whole percent from 1 to 100").count()).toBeGreaterThan(0);
    await page.getByLabel(/^coding agent/).fill("50, 80, 100");
    await page.getByRole("button", { name: "Save thresholds of coding agent" }).click();
    await page.waitForURL("**/settings/alerts?done=key");
    await page.getByLabel("Alert when the balance falls below (USD)").fill("0.5, 0.1");
    await page.getByRole("button", { name: "Save balance thresholds" }).click();
    await page.waitForURL("**/settings/alerts?done=balance");

    await page.getByLabel("Endpoint URL").fill(receiverUrl);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = await page.locator("#new-secret-value").inputValue();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.waitForURL("**/settings/alerts?done=test");
    expect(await page.locator("#new-secret-value").count()).toBe(0); // shown once
    const [test] = await receivedOf("test", 1);
    expect(verify(secret, test!.signature, test!.body)).toBe(true);
    expect(verify(secret, test!.signature, test!.body.replace("test", "tost"))).toBe(false);

    // Requests on the key until its usage passes 80 % of its $0.0001 (a few cents of a cent each).
    const openai = new OpenAI({ apiKey: key, baseURL: `${service.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
    for (let i = 0; i < 30 && (await receivedOf("key.budget_threshold", 2, 0)).length < 2; i++) {
      try {
        await openai.chat.completions.create({ model: LLAMA, max_tokens: 200, messages: [{ role: "user", content: "Hello [sim tokens=200]" }] });
      } catch (err) {
        if (err instanceof OpenAI.APIError && err.status === 402) break;
        throw err;
      }
    }
    const alerts = await receivedOf("key.budget_threshold", 2);
    expect(alerts.map((a) => a.event.data.threshold_percent)).toEqual([50, 80]);
    for (const a of alerts) expect(verify(secret, a.signature, a.body)).toBe(true);
    expect(alerts[0]!.event.data).toMatchObject({ key_name: "coding agent", limit_usd: 0.0001, limit_reset: null });

    await page.goto(service.url + "/settings/alerts");
    expect(await page.getByText(/coding agent .* reached 80 % of its \$0.0001 limit/).count()).toBe(1);
    expect(await page.getByText(/reached 50 %/).count()).toBe(1);
    expect(await page.getByText("delivered (200)").count()).toBeGreaterThanOrEqual(3);
    await page.screenshot({ path: `${SCREENSHOTS}/console-alerts.png`, fullPage: true });
    copyFileSync(`${SCREENSHOTS}/console-alerts.png`, "docs/console-alerts.png");
    // Nothing fired twice.
    const alertBodies = received.filter((r) => r.path === "/hooks/switchyard");
    expect(new Set(alertBodies.map((r) => JSON.parse(r.body).id)).size).toBe(alertBodies.length);
    await page.close();
    expect(problems).toEqual([]);
  });

  it("the trace export page: a webhook destination (its secret shown once), a request's record delivered signed, the delivery in its log", async () => {
    const email = `traces-${Date.now()}@example.test`;
    const page = await newPage();
    await page.context().clearCookies(); // the pages share one browser context: the alerts test's session ends here
    await page.goto(service.url + "/sign-up");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("a long chosen password");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/settings/keys");
    const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
    const account = await admin.request<{ id: string }>("GET", `/accounts/${encodeURIComponent(email)}`);
    await admin.request("POST", `/accounts/${account.id}/credits`, { usd: 1 });
    const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: account.id, label: "support bot" });

    await page.getByRole("link", { name: "Trace export", exact: true }).click();
    await page.waitForURL("**/settings/observability");
    await page.getByLabel("Kind").selectOption("webhook");
    await page.getByLabel("Name").fill("Team webhook");
    await page.getByLabel("Endpoint URL").fill(tracesUrl);
    await page.getByRole("button", { name: "Add destination" }).click();
    const secret = await page.locator("#new-secret-value").inputValue();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);

    const openai = new OpenAI({ apiKey: key, baseURL: `${service.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
    const completion = await openai.chat.completions.create({ model: LLAMA, messages: [{ role: "user", content: "Hello [sim tokens=5]" }] });
    const deadline = Date.now() + 30_000; // the records queue, then the traces queue
    const delivered = () => received.filter((r) => r.path === "/hooks/traces");
    while (delivered().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const [delivery] = delivered();
    expect(verify(secret, delivery!.signature, delivery!.body)).toBe(true);
    expect(delivery!.body).toContain(completion.id);

    await page.goto(service.url + "/settings/observability");
    expect(await page.locator("#new-secret-value").count()).toBe(0); // shown once
    await page.getByRole("link", { name: "Team webhook" }).click();
    expect(await page.getByText(/delivered \(200\)/).count()).toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/console-observability.png`, fullPage: true });
    copyFileSync(`${SCREENSHOTS}/console-observability.png`, "docs/console-observability.png");
    await page.close();
    expect(problems).toEqual([]);
  });
});
