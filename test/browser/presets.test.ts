import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import type { Page } from "playwright-core";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";
import { launchChromium, SCREENSHOTS, watchedPage, type Chromium } from "./chromium.ts";

// The Presets page in Chromium: create a preset, save a new version, see both versions; a key of the
// account then uses `@preset/<slug>` through the openai SDK, and the activity names the preset.
let service: LocalService;
let browser: Chromium;
let state: string;
const problems: string[] = [];
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-presets-"));
  service = await startLocalService({ port: 0, persistTo: join(state, "wrangler"), quiet: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
});

const newPage = (): Promise<Page> => watchedPage(browser, problems);

describe("the Presets page", () => {
  it("create → save a new version → both versions shown → the openai SDK uses @preset/<slug> → the activity names it", async () => {
    const email = `presets-${Date.now()}@example.test`;
    const page = await newPage();
    await page.goto(service.url + "/sign-up");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("a long chosen password");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/settings/keys");

    await page.getByRole("link", { name: "Presets", exact: true }).click();
    await page.waitForURL("**/settings/presets");
    expect(await page.getByText("You have no presets yet").count()).toBe(1);
    // A mistake first: the server names the field, and keeps what was typed.
    await page.getByLabel("Slug").fill("support");
    await page.getByLabel("Config (JSON)").fill(JSON.stringify({ model: LLAMA, temperature: 3 }));
    await page.getByRole("button", { name: "Create preset" }).click();
    expect(await page.getByText("config.temperature: must be at most 2").count()).toBeGreaterThan(0);
    expect(await page.getByLabel("Slug").inputValue()).toBe("support");
    await page.getByLabel("Config (JSON)").fill(JSON.stringify({ model: LLAMA, temperature: 0.3 }));
    await page.getByLabel("System prompt (optional)").fill("Answer support tickets briefly.");
    await page.getByRole("button", { name: "Create preset" }).click();
    await page.waitForURL("**/settings/presets/support?done=created");
    expect(await page.getByText("Preset created: version 1.").count()).toBe(1);

    await page.getByLabel("Config (JSON)").fill(JSON.stringify({ model: LLAMA, temperature: 0.7 }, null, 2));
    await page.getByRole("button", { name: "Save as version 2" }).click();
    await page.waitForURL("**/settings/presets/support?done=saved");
    expect(await page.getByRole("heading", { name: /^Version 2/ }).count()).toBe(1);
    expect(await page.getByRole("heading", { name: /^Version 1/ }).count()).toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/presets-edit.png`, fullPage: true });

    const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
    const accounts = await admin.request<{ id: string }>("GET", `/accounts/${encodeURIComponent(email)}`);
    await admin.request("POST", `/accounts/${accounts.id}/credits`, { usd: 1 });
    const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: accounts.id });
    const openai = new OpenAI({ apiKey: key, baseURL: `${service.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
    const completion = await openai.chat.completions.create({ model: "@preset/support", messages: [{ role: "user", content: "Hello [sim tokens=3]" }] });
    expect(completion.model).toBe(LLAMA);

    await page.getByRole("link", { name: "Activity", exact: true }).click();
    await page.waitForURL("**/activity");
    const deadline = Date.now() + 15_000;
    // Bounded: the request reaches the activity shortly after it settles.
    while ((await page.getByText("@preset/support@2").count()) === 0 && Date.now() < deadline) await page.reload({ waitUntil: "load" });
    expect(await page.getByText("@preset/support@2").count()).toBe(1);
    await page.close();
    expect(problems).toEqual([]);
  });
});
