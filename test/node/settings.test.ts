import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { IN_WRANGLER_TOML, SETTINGS, settings } from "../../src/settings.ts";
import { withSettingsTable } from "../../scripts/docs-config.ts";
import { readWranglerConfig } from "../../scripts/wrangler-config.ts";
import { root } from "./source-files.ts";

// One table of settings (src/settings.ts): parsed once, documented from it, in step with wrangler.toml.
describe("settings", () => {
  it("docs/configuration.md shows the table as it is (npm run docs:config rewrites it)", () => {
    const doc = readFileSync(`${root}/docs/configuration.md`, "utf8");
    expect(withSettingsTable(doc)).toBe(doc);
  });

  it("the vars wrangler.toml sets are the ones the table says it sets", () => {
    expect(Object.keys(readWranglerConfig(`${root}/wrangler.toml`).vars).sort()).toEqual([...IN_WRANGLER_TOML].sort());
    for (const [name, spec] of Object.entries(SETTINGS))
      expect(spec.kind === "var (wrangler.toml)", name).toBe((IN_WRANGLER_TOML as readonly string[]).includes(name));
  });

  it("defaults, values, and an invalid value falling back to its default; parsed once per env object", () => {
    const env = { CARRIER_TIMEOUT_MS: "1500", SETTLE_WINDOW_MS: "soon", ROUTING_BALANCE: "off", ROUTING_SEED: " 42 ", PLATFORM_FEE_PERCENT: "2.25" };
    const s = settings(env);
    expect(s).toMatchObject({
      CARRIER_TIMEOUT_MS: 1500,
      SETTLE_WINDOW_MS: 20,
      ROUTING_BALANCE: false,
      ROUTING_SEED: 42,
      PLATFORM_FEE_PERCENT: 2.25,
      RELAY_MAX_EVENT_BYTES: 8 * 1024 * 1024,
      ADMIN_TOKEN: undefined,
    });
    expect(settings(env)).toBe(s);
    expect(settings({})).toMatchObject({ ROUTING_BALANCE: true, ROUTING_SEED: null, PLATFORM_FEE_PERCENT: 5.5, CARRIER_TIMEOUT_MS: 60_000 });
  });

  it("decimals and ranges: a fee percent with more than 3 decimals, or a checkout expiry Stripe would refuse, takes the default", () => {
    expect(settings({ PLATFORM_FEE_PERCENT: "2.5", PLATFORM_FEE_MIN_USD: "0", PAYMENT_CHECKOUT_EXPIRY_S: "1800" })).toMatchObject({
      PLATFORM_FEE_PERCENT: 2.5,
      PLATFORM_FEE_MIN_USD: 0,
      PAYMENT_CHECKOUT_EXPIRY_S: 1800,
    });
    expect(settings({ PLATFORM_FEE_PERCENT: "2.5001", PLATFORM_FEE_MIN_USD: "-1", PAYMENT_CHECKOUT_EXPIRY_S: "600" })).toMatchObject({
      PLATFORM_FEE_PERCENT: 5.5,
      PLATFORM_FEE_MIN_USD: 0.8,
      PAYMENT_CHECKOUT_EXPIRY_S: 3600,
    });
    expect(settings({ PAYMENT_CHECKOUT_EXPIRY_S: "86401" }).PAYMENT_CHECKOUT_EXPIRY_S).toBe(3600);
  });
});
