import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import OpenAI from "openai";
import type { Page } from "playwright-core";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";
import { ensureDemoAccount, demoSignInLink } from "../../scripts/demo-account.ts";
import { launchChromium, SCREENSHOTS, type Chromium } from "./chromium.ts";

// The ways in for the accounts made without a password, in Chromium: the demo account through the link
// `npm start`'s banner prints (its key's requests then show in Activity), and the deployer's first account
// through the link `npm run cloudflare:setup -- --email …` prints (against a recording stand-in for wrangler).
let service: LocalService;
let browser: Chromium;
let state: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-links-"));
  service = await startLocalService({ port: 0, persistTo: join(state, "wrangler"), quiet: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
});

const password = "a long chosen password";

/** Opens a one-time link, presses Sign in, and chooses the account's first password; ends on the keys page. */
async function signInAndChoosePassword(page: Page, link: string): Promise<void> {
  await page.goto(link);
  // The page's script takes the token out of the address bar.
  expect(new URL(page.url()).hash).toBe("");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL("**/settings/password");
  expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Choose a password");
  expect(await page.getByLabel("Current password").count()).toBe(0);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Set password" }).click();
  await page.waitForURL("**/settings/keys?done=password");
}

/** Runs the setup as a deployer would, against the local service standing in for the deployment; resolves with its output. */
function cloudflareSetup(email: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "scripts/cloudflare-setup.ts", "--out", join(state, "w.toml"), "--dev-vars", join(state, "none"), "--email", email],
      {
        env: {
          PATH: process.env.PATH ?? "",
          SWITCHYARD_ADMIN_TOKEN: DEV_ADMIN_TOKEN,
          WRANGLER: resolve("test/node/fixtures/fake-wrangler.mjs"),
          FAKE_WRANGLER_STATE: join(state, "cloudflare.json"),
          FAKE_WRANGLER_LOG: join(state, "wrangler.log"),
          FAKE_WRANGLER_URL: service.url,
        },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 60_000,
      },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", (code) => (code === 0 ? done(out) : fail(new Error(`cloudflare:setup exited ${code}:\n${out}`))));
  });
}

describe("one-time sign-in links in Chromium", () => {
  it("the demo account: the banner's link signs in, a password is chosen, and the demo key's request is in Activity", async () => {
    const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
    const { key } = await ensureDemoAccount(admin, service.url, join(state, "demo-key"));
    const completion = await new OpenAI({ apiKey: key, baseURL: `${service.url}/api/v1`, maxRetries: 0, timeout: 20_000 }).chat.completions.create({
      model: "meta-llama/llama-3.1-8b-instruct",
      messages: [{ role: "user", content: "Hello from the demo key [sim tokens=7]" }],
    });
    const { url } = await demoSignInLink(admin);

    const page = await browser.context.newPage();
    await signInAndChoosePassword(page, url);
    expect(await page.locator(".who").textContent()).toBe("demo@switchyard.local");
    await page.getByRole("link", { name: "Activity" }).click();
    const deadline = Date.now() + 15_000; // the record reaches the activity table shortly after the request settles
    while ((await page.locator(`tr[id="${completion.id}"]`).count()) === 0) {
      if (Date.now() > deadline) throw new Error(`${completion.id} not in Activity`);
      await page.reload({ waitUntil: "load" });
    }
    expect(await page.locator(`tr[id="${completion.id}"]`).textContent()).toContain("meta-llama/llama-3.1-8b-instruct");
    await page.screenshot({ path: `${SCREENSHOTS}/demo-activity.png`, fullPage: true });

    // The link is used up: opened again, it signs no one in.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.goto(url);
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("This sign-in link has been used or has expired");
    await page.close();
  });

  it("the deployer: cloudflare:setup prints the first account's link once; it signs in, a password is chosen, the password signs in after", async () => {
    const email = `owner-${Date.now()}@example.test`;
    const out = await cloudflareSetup(email);
    const link = new RegExp(`Sign in to the console as ${email.replace(/\./g, "\\.")}[^\\n]*: (\\S+)`).exec(out)?.[1];
    expect(link, out).toMatch(new RegExp(`^${service.url}/sign-in/link#`));

    const page = await browser.context.newPage();
    await signInAndChoosePassword(page, link!);
    expect(await page.locator(".who").textContent()).toBe(email);
    await page.screenshot({ path: `${SCREENSHOTS}/deployer-signed-in.png`, fullPage: true });
    await page.getByRole("button", { name: "Sign out" }).click();

    await page.goto(service.url + "/sign-in");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/settings/keys");
    expect(await page.locator(".who").textContent()).toBe(email);
  });
});
