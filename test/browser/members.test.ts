import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { startLocalService, type LocalService } from "../../scripts/local-service.ts";
import { launchChromium, SCREENSHOTS, watchedPage, type Chromium } from "./chromium.ts";

// The Members page in Chromium: an owner invites a colleague (the link shown once), the colleague opens it,
// chooses a password and lands in the account as a member; a page their role does not allow is a 403; the
// owner sees both on the Members page and the invitation in the audit log.
let service: LocalService;
let browser: Chromium;
let state: string;
const problems: string[] = [];

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-members-"));
  service = await startLocalService({ port: 0, persistTo: join(state, "wrangler"), quiet: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
});

const newPage = (): Promise<Page> => watchedPage(browser, problems);

const PASSWORD = "a long chosen password";

async function signIn(page: Page, email: string) {
  await page.goto(service.url + "/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

describe("the Members page", () => {
  it("invite → the link shown once → accept with a password → signed in as a member → a forbidden page is 403 → the owner sees both", async () => {
    const owner = `owner-${Date.now()}@example.test`;
    const colleague = `colleague-${Date.now()}@example.test`;
    const page = await newPage();
    await page.goto(service.url + "/sign-up");
    await page.getByLabel("Email").fill(owner);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/settings/keys");

    await page.getByRole("link", { name: "Members", exact: true }).click();
    await page.waitForURL("**/settings/members");
    await page.getByLabel("Email", { exact: true }).fill(colleague);
    await page.getByLabel("Role", { exact: true }).selectOption("member");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    const link = await page.getByRole("textbox", { name: "Invitation link" }).inputValue();
    expect(link).toMatch(new RegExp(`^${service.url}/join#[A-Za-z0-9_-]{43}$`));
    await page.screenshot({ path: `${SCREENSHOTS}/members-invite-link.png`, fullPage: true });
    // Shown once: the list has the invitation, never its link.
    await page.goto(service.url + "/settings/members");
    expect(await page.getByRole("row", { name: new RegExp(colleague) }).count()).toBe(1);
    expect(await page.content()).not.toContain(link.split("#")[1]!);
    await page.getByRole("button", { name: "Sign out" }).click();

    await page.goto(link);
    expect(page.url()).toBe(`${service.url}/join`); // the script took the token out of the address bar
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Join and sign in" }).click();
    await page.waitForURL("**/settings/keys");
    expect(await page.getByRole("link", { name: "Members", exact: true }).count()).toBe(0); // not in a member's navigation
    const forbidden = await page.goto(service.url + "/settings/members");
    expect(forbidden?.status()).toBe(403);
    expect(await page.getByRole("heading", { name: "Not allowed" }).count()).toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/members-forbidden.png`, fullPage: true });
    // The link works once.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.goto(link);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Join and sign in" }).click();
    expect(await page.getByText("This invitation has been used, revoked or has expired").count()).toBeGreaterThan(0);

    await signIn(page, owner);
    await page.waitForURL("**/settings/keys");
    await page.goto(service.url + "/settings/members");
    expect(await page.getByRole("row", { name: new RegExp(`${colleague}.*Member`) }).count()).toBe(1);
    expect(await page.getByText("No open invitations.").count()).toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/members.png`, fullPage: true });
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    expect(await page.getByText("member.join").count()).toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/members-audit.png`, fullPage: true });
    // A phone-sized members page does not scroll sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(service.url + "/settings/members");
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}/phone-members.png`, fullPage: true });
    expect(problems).toEqual([]);
  });
});
