import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's `chromium` package (`apt-get install -y chromium`); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const SCREENSHOTS = "test-results/screenshots";

export type Chromium = { context: BrowserContext; close(): Promise<void> };

/** Headless Chromium with a fresh profile (its own --user-data-dir), removed on close. */
export async function launchChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "switchyard-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
    timeout: 60_000,
  });
  context.setDefaultTimeout(15_000);
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
