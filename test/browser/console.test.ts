import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { APIError } from "openai";
import type { Locator, Page } from "playwright-core";
import { startLocalService, type LocalService } from "../../scripts/local-service.ts";
import { launchChromium, SCREENSHOTS, watchedPage, type Chromium } from "./chromium.ts";
import { stripeSignature } from "../../simulator/stripe/server.ts";

// The web console of a service started the way `npm start` starts it, driven in headless Chromium.
let service: LocalService;
let browser: Chromium;
let state: string;
const problems: string[] = [];

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-browser-"));
  service = await startLocalService({ port: 0, persistTo: join(state, "wrangler"), quiet: true });
  browser = await launchChromium();
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: service.url });
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
});

/**
 * A page that records console errors (CSP violations land there), script errors and failed
 * subresources. A page answered with a 4xx on purpose (a refused sign-in) is not a problem.
 */
async function newPage(viewport?: { width: number; height: number }): Promise<Page> {
  const page = await watchedPage(browser, problems);
  if (viewport) await page.setViewportSize(viewport);
  page.on("requestfailed", (r) => problems.push(`failed: ${r.url()}`));
  return page;
}

/** How many pixels of an element's content are hidden behind a sideways scroll (0 or less: it all shows). */
const hiddenSideways = (locator: Locator) => locator.evaluate((el) => el.scrollWidth - el.clientWidth);
const shot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
const PHONE = { width: 390, height: 844 };
/** The page as it is at 1280 px (`name`) and, laid out again without reloading, at 390 px (`phone-<name>`): docs/ shows both. */
async function shots(page: Page, name: string): Promise<void> {
  const wide = page.viewportSize()!;
  await shot(page, name);
  await page.setViewportSize(PHONE);
  await shot(page, `phone-${name}`);
  await page.setViewportSize(wide);
}

/** Where an element is drawn, and whether it lies wholly inside the window's width (neither cut off nor behind a sideways scroll). */
async function insideWidth(locator: Locator): Promise<boolean> {
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  const width = await locator.page().evaluate(() => window.innerWidth);
  return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= width;
}
const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${service.url}/api/v1`, maxRetries: 0, timeout: 20_000 });

/** Reloads until the locator shows up (bounded): a request reaches the activity table shortly after it settles. */
async function reloadUntilVisible(page: Page, selector: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await page.locator(selector).count()) > 0) return;
    if (Date.now() > deadline) throw new Error(`${selector} not on ${page.url()} after ${timeoutMs} ms`);
    await page.reload({ waitUntil: "load" });
  }
}

/** The Stripe simulator's control API (not Stripe's): how tests make webhooks late, duplicated or out of order. */
async function stripeControl<T = unknown>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`${service.stripe!.url}/_sim${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`stripe simulator ${path}: ${res.status}`);
  return (await res.json()) as T;
}
const stripeEvents = async () =>
  ((await (await fetch(`${service.stripe!.url}/_sim/events`)).json()) as { events: Array<{ type: string; payload: string }> }).events;

/** Waits (bounded) until the simulator has delivered `count` events of `type` to the Worker with a 2xx. */
async function untilDelivered(type: string, count: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { deliveries } = (await (await fetch(`${service.stripe!.url}/_sim/deliveries`)).json()) as { deliveries: Array<{ type: string; status: number }> };
    if (deliveries.filter((d) => d.type === type && d.status >= 200 && d.status < 300).length >= count) return;
    if (Date.now() > deadline) throw new Error(`${count} deliveries of ${type} not seen after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const email = `browser-${Date.now()}@example.test`;
const password = "a long browser password";

describe("web console in Chromium", () => {
  it("public pages: home, models (search), a model's carriers", async () => {
    const page = await newPage();
    await page.goto(service.url + "/");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("One API for first-party and open models");
    expect(await page.locator("#base-url").textContent()).toBe(`${service.url}/api/v1`);
    await shots(page, "home");
    // Keyboard users land on the skip link first.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");

    await page.getByRole("link", { name: "Models", exact: true }).first().click();
    await page.waitForURL("**/models");
    const all = await page.locator("tbody tr").count();
    expect(all).toBeGreaterThan(10);
    await shots(page, "models");
    await page.getByLabel("Search", { exact: true }).fill("llama");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL("**/models?q=llama*");
    const filtered = await page.locator("tbody tr").count();
    expect(filtered).toBeGreaterThan(0);
    expect(filtered).toBeLessThan(all);

    await page
      .getByRole("link", { name: /Llama 3\.1 8B/ })
      .first()
      .click();
    await page.waitForURL("**/models/meta-llama/**");
    expect(await page.getByRole("table").locator("tbody tr").count()).toBeGreaterThan(0);
    // The carrier table fits a 1280 px window: no column hidden behind a sideways scroll.
    expect(page.viewportSize()?.width).toBe(1280);
    expect(await hiddenSideways(page.locator(".table-wrap").first())).toBeLessThanOrEqual(0);
    await shot(page, "model");
    await page.close();
  });

  it("sign up → add credits → create a key (shown once) → use it with openai → activity and balance → disable → 401", async () => {
    const page = await newPage();
    await page.goto(service.url + "/sign-up");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await shot(page, "sign-up");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/settings/keys");
    expect(await page.getByText(email).count()).toBe(1);

    // Credits through Stripe Checkout: the Stripe simulator's hosted page, its signed webhooks posted to
    // this service — each one twice, as Stripe may deliver an event more than once.
    await stripeControl("/webhooks", { mode: "deliver", duplicate: true });
    await page.getByRole("link", { name: "Credits" }).click();
    await page.waitForURL("**/settings/credits");
    expect(await page.getByText("Local test mode — the Stripe simulator.").count()).toBe(1);
    await page.getByLabel("Credits to buy, in USD").fill("10");
    await page.getByRole("button", { name: "Review payment" }).click();
    await page.waitForURL("**/settings/credits?amount=10*");
    // The fee before paying: 5.5 % of $10 is 55 cents, so the $0.80 minimum.
    expect(await page.locator("#review-credits").textContent()).toBe("$10.00");
    expect(await page.locator("#review-fee").textContent()).toBe("$0.80");
    expect(await page.locator("#review-total").textContent()).toBe("$10.80");
    await shots(page, "credits-review");
    await page.getByRole("button", { name: "Pay $10.80 with Stripe" }).click();
    await page.waitForURL(`${service.stripe!.url}/c/pay/**`);
    expect(await page.getByText("$10.80").count()).toBeGreaterThan(0);
    await page.getByLabel("Card number").fill("4242 4242 4242 4242");
    await page.getByLabel(/Expir/).fill("12 / 40");
    await page.getByLabel("CVC").fill("123");
    await page.getByLabel(/Name/).fill("Ada Lovelace");
    await shots(page, "checkout");
    await page.getByRole("button", { name: /^Pay/ }).click();
    await page.waitForURL("**/settings/credits?checkout=*");
    expect(await page.locator("#balance").textContent()).toBe("$10.00");
    // Both deliveries of the completed event reached the Worker, and the balance counts it once.
    await untilDelivered("checkout.session.completed", 2);
    await page.reload();
    expect(await page.locator("#balance").textContent()).toBe("$10.00");
    // A forged event (the genuine payload signed with another secret) is refused.
    const completed = (await stripeEvents()).find((e) => e.type === "checkout.session.completed")!;
    const forged = await fetch(`${service.url}/webhooks/stripe`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": stripeSignature(completed.payload, "whsec_forger", Math.floor(Date.now() / 1000)) },
      body: completed.payload.replace('"amount_total":1080', '"amount_total":108000'),
    });
    expect(forged.status).toBe(400);
    // Late and out of order: the next purchase's webhooks are held; the page back from checkout asks Stripe
    // itself; the held events, delivered newest first afterwards, add nothing more.
    await stripeControl("/webhooks", { mode: "hold", duplicate: false });
    await page.goto(service.url + "/settings/credits?amount=5");
    await page.getByRole("button", { name: "Pay $5.80 with Stripe" }).click();
    await page.waitForURL(`${service.stripe!.url}/c/pay/**`);
    await page.getByLabel("Card number").fill("4242 4242 4242 4242");
    await page.getByLabel(/Expir/).fill("12 / 40");
    await page.getByLabel("CVC").fill("123");
    await page.getByLabel(/Name/).fill("Ada Lovelace");
    await page.getByRole("button", { name: /^Pay/ }).click();
    await page.waitForURL("**/settings/credits?checkout=*");
    expect(await page.getByText("Payment received: $5.00 of credits added.").count()).toBe(1);
    expect(await page.locator("#balance").textContent()).toBe("$15.00");
    const { released } = await stripeControl<{ released: Array<{ type: string; status: number }> }>("/webhooks/release", { order: "reverse" });
    expect(released.map((r) => r.type)).toContain("checkout.session.completed");
    expect(released.every((r) => r.status === 200)).toBe(true);
    await stripeControl("/webhooks", { mode: "deliver", duplicate: false });
    await page.reload();
    expect(await page.locator("#balance").textContent()).toBe("$15.00");

    // A key, shown once.
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Name").fill("browser test");
    await page.getByRole("button", { name: "Create key" }).click();
    const keyField = page.getByLabel("API key");
    const key = await keyField.inputValue();
    expect(key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    await shots(page, "keys-new-key");
    // The copy button appears with JavaScript and copies the key.
    await page.getByRole("button", { name: "Copy the new key" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    // Never again: the list page (and a fresh visit) show only the masked label.
    await page.goto(service.url + "/settings/keys");
    expect(await page.content()).not.toContain(key.slice(9));
    expect(await page.getByLabel("API key").count()).toBe(0);
    expect(await page.getByText(`${key.slice(0, 12)}...${key.slice(-3)}`).count()).toBe(1);

    // The key with the openai client.
    const completion = await client(key).chat.completions.create({
      model: "meta-llama/llama-3.1-8b-instruct",
      messages: [{ role: "user", content: "Hello from the browser test [sim tokens=12]" }],
    });
    const cost = (completion.usage as unknown as { cost: number }).cost;
    expect(cost).toBeGreaterThan(0);

    // It shows up in the activity, with its cost.
    await page.getByRole("link", { name: "Activity" }).click();
    await reloadUntilVisible(page, `tr[id="${completion.id}"]`);
    const row = page.locator(`tr[id="${completion.id}"]`);
    const costText = `$${cost.toFixed(9).replace(/0+$/, "")}`;
    expect(await row.textContent()).toContain(costText);
    expect(await row.textContent()).toContain("meta-llama/llama-3.1-8b-instruct");
    // The table shows a request as soon as it settles (still in the account's ledger); the chart counts it once
    // its record is stored, a flush later (npm start: within RECORDS_FLUSH_MAX_DELAY_MS = 1 s; docs/console.md).
    await reloadUntilVisible(page, "figure.chart rect.bar");
    expect(await page.locator("figure.chart rect.bar").count()).toBe(1);
    // At 1280 px the chart spans its card: the scale at the card's left, the plot to its right edge, today's bar at the far right.
    const card = (await page.locator("figure.chart").boundingBox())!;
    const scale = (await page.locator("figure.chart .chart-axis").boundingBox())!;
    const plot = (await page.locator("figure.chart .chart-plot").boundingBox())!;
    const bar = (await page.locator("figure.chart rect.bar").boundingBox())!;
    expect(card.width).toBeGreaterThan(1000);
    expect(scale.x - card.x).toBeLessThan(40); // the card's padding, 16 px, and its border
    expect(card.x + card.width - (plot.x + plot.width)).toBeLessThan(40);
    expect(plot.width).toBeGreaterThan(card.width * 0.8);
    expect(bar.x + bar.width).toBeGreaterThan(card.x + card.width * 0.9);
    await shots(page, "activity");

    // The balance dropped by exactly that cost.
    await page.getByRole("link", { name: "Credits" }).click();
    const costNano = Math.round(cost * 1e9);
    expect(await page.locator("#balance").textContent()).toBe(`$${((15e9 - costNano) / 1e9).toFixed(9).replace(/0+$/, "")}`);
    expect(await page.locator("#total-usage").textContent()).toBe(costText);
    await shots(page, "credits");

    // Disable the key: the API answers 401.
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("button", { name: "Disable key browser test" }).click();
    await page.waitForURL("**/settings/keys?done=disabled");
    expect(await page.getByText("Disabled", { exact: true }).count()).toBe(1);
    // A key's buttons stay on one line (they do not wrap under each other) and the table fits the window.
    const tops = await page
      .locator("tbody .actions")
      .first()
      .evaluate((el) => Array.from(el.querySelectorAll("button, a")).map((b) => (b as HTMLElement).offsetTop));
    expect(tops.length).toBeGreaterThan(1);
    expect(new Set(tops).size).toBe(1);
    expect(await hiddenSideways(page.locator(".table-wrap").first())).toBeLessThanOrEqual(0);
    await shots(page, "keys");
    const err = await client(key)
      .chat.completions.create({ model: "meta-llama/llama-3.1-8b-instruct", messages: [{ role: "user", content: "x" }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(401);
    await page.close();
  });

  it("phone-sized pages do not scroll sideways; the chart's scale, the keys' status and actions and the payments' status show; sign out and sign back in", async () => {
    const page = await newPage(PHONE);
    for (const path of ["/", "/models", "/settings/keys", "/settings/credits", "/settings/observability", "/activity"]) {
      await page.goto(service.url + path);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    // The chart's scale (its labels, top to bottom) and its day labels are drawn inside the window, not scrolled off it.
    const labels = page.locator("figure.chart .chart-axis text");
    const scale = await labels.allTextContents();
    expect(scale).toHaveLength(3); // the round top, its half, zero
    expect(scale[2]).toBe("$0");
    for (const text of scale) expect(text).toMatch(/^\$\d/);
    for (const label of await labels.all()) expect(await insideWidth(label), (await label.textContent()) ?? "").toBe(true);
    for (const label of await page.locator("figure.chart .chart-plot text").all())
      expect(await insideWidth(label), (await label.textContent()) ?? "").toBe(true);
    expect(await insideWidth(page.locator("figure.chart rect.bar"))).toBe(true);
    // Every column of the requests shows on the phone: the rows stack, each value beside its column's name.
    expect(await insideWidth(page.locator("tr[id^='gen-'] td[data-label='Status']"))).toBe(true);
    expect(await page.locator("tr[id^='gen-'] td[data-label='Status']").textContent()).toBe("200 OK");
    expect(await hiddenSideways(page.locator(".table-wrap").last())).toBeLessThanOrEqual(0);
    // Tokens instead of spend: the chart says so, and fits its card and the window.
    await page.getByRole("link", { name: "Tokens", exact: true }).click();
    await page.waitForURL("**/activity?metric=tokens");
    expect(await page.locator("figure.chart figcaption").textContent()).toBe("Daily tokens (in + out), last 30 days (UTC)");
    expect(await page.locator("figure.chart rect.bar").count()).toBe(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    const card = (await page.locator("figure.chart").boundingBox())!;
    for (const part of ["figure.chart .chart-axis", "figure.chart .chart-plot"]) {
      const box = (await page.locator(part).boundingBox())!;
      expect(box.x, part).toBeGreaterThanOrEqual(card.x);
      expect(box.x + box.width, part).toBeLessThanOrEqual(card.x + card.width);
    }
    for (const label of await page.locator("figure.chart .chart-axis text").all())
      expect(await insideWidth(label), (await label.textContent()) ?? "").toBe(true);

    // The keys: the key's status and its actions show without a sideways scroll.
    await page.goto(service.url + "/settings/keys");
    expect(await hiddenSideways(page.locator(".table-wrap").first())).toBeLessThanOrEqual(0);
    const keyRow = page.locator("tbody tr", { has: page.getByText("browser test", { exact: true }) });
    expect(await keyRow.locator("td[data-label='Status']").textContent()).toBe("Disabled");
    expect(await insideWidth(keyRow.locator("td[data-label='Status']"))).toBe(true);
    for (const action of [
      page.getByRole("link", { name: "Edit key browser test…" }),
      page.getByRole("button", { name: "Enable key browser test" }),
      page.getByRole("link", { name: "Delete key browser test…" }),
    ])
      expect(await insideWidth(action)).toBe(true);
    // The payments: each one's status shows.
    await page.goto(service.url + "/settings/credits");
    const statuses = page.locator("td[data-label='Status']");
    expect(await statuses.count()).toBe(2);
    for (const status of await statuses.all()) {
      expect(await status.textContent()).toMatch(/\S/);
      expect(await insideWidth(status)).toBe(true);
    }
    expect(await hiddenSideways(page.locator(".table-wrap").last())).toBeLessThanOrEqual(0);
    await page.goto(service.url + "/activity");
    await shot(page, "phone-activity");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(service.url + "/");
    await page.goto(service.url + "/settings/keys");
    await page.waitForURL("**/sign-in?next=%2Fsettings%2Fkeys");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("Email or password is incorrect.");
    await shot(page, "phone-sign-in-error");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/settings/keys");
    await page.close();
  });

  it("no page logged a CSP violation or script error", () => {
    expect(problems).toEqual([]);
  });
});
