import { logWarning } from "./log-error";
import { isolate } from "./isolate";
import { invalid, type Spec } from "./settings/spec";
import { ACCESS_SETTINGS } from "./settings/access";
import { REQUEST_PATH_SETTINGS } from "./settings/request-path";
import { LEDGER_RECORDS_SETTINGS } from "./settings/ledger-records";
import { PAYMENTS_SETTINGS } from "./settings/payments";
import { GUARDRAIL_SETTINGS } from "./settings/guardrails";
import { PRESET_SETTINGS } from "./settings/presets";
import { MEMBER_SETTINGS } from "./settings/members";
import { ALERT_SETTINGS } from "./settings/alerts";
import { BYOK_SETTINGS } from "./settings/byok";
import { OBSERVABILITY_SETTINGS } from "./settings/observability";
import { ANSWER_CACHE_SETTINGS } from "./settings/answer-cache";

export type { SignUpPolicy } from "./settings/spec";

/** The settings wrangler.toml's [vars] set (`wrangler types` types them); a test holds the list against wrangler.toml. */
export const IN_WRANGLER_TOML = [
  "HEALTH_CONSECUTIVE_FAILURES",
  "HEALTH_FAILURE_MEMORY_S",
  "HEALTH_OUTAGE_UPTIME_PERCENT",
  "HEALTH_MIN_ATTEMPTS",
  "HEALTH_MEMO_MS",
  "ROUTING_BALANCE",
] as const;
export type WranglerTomlVar = (typeof IN_WRANGLER_TOML)[number];

/**
 * Every setting of the Worker — its vars and secrets, not its bindings — in one table: kind, default,
 * what it does. `settings(env)` parses them all once per env object (once per isolate in production);
 * modules read their part from it. docs/configuration.md is generated from this table
 * (`npm run docs:config`) and a test keeps the two equal. An unset value takes its default; an invalid
 * one too, and is logged once, naming the variable and what it should be.
 */
export const SETTINGS = {
  ...ACCESS_SETTINGS,
  ...REQUEST_PATH_SETTINGS,
  ...LEDGER_RECORDS_SETTINGS,
  ...PAYMENTS_SETTINGS,
  ...GUARDRAIL_SETTINGS,
  ...PRESET_SETTINGS,
  ...MEMBER_SETTINGS,
  ...ALERT_SETTINGS,
  ...BYOK_SETTINGS,
  ...OBSERVABILITY_SETTINGS,
  ...ANSWER_CACHE_SETTINGS,
};

export type SettingName = keyof typeof SETTINGS;
/** The parsed settings: each variable's value, typed by its table entry. */
export type Settings = { readonly [K in SettingName]: (typeof SETTINGS)[K]["fallback"] | Exclude<ReturnType<(typeof SETTINGS)[K]["parse"]>, typeof invalid> };
/** What settings are read from: the Worker's env (or, in pure tests, any object with some of the variables). */
export type SettingsSource = Partial<Record<SettingName, string>> | object;

/** Parsed settings by env object (an isolate sees one env; tests make others). */
const parsedSettings = isolate.slot("settings", () => new WeakMap<object, Settings>());

/** The Worker's settings, parsed once per env object. */
export function settings(env: SettingsSource): Settings {
  const parsed = parsedSettings.get();
  const known = parsed.get(env);
  if (known) return known;
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(SETTINGS) as Array<[SettingName, Spec<unknown>]>) {
    const raw: unknown = Reflect.get(env, name);
    const value = spec.parse(typeof raw === "string" ? raw : undefined);
    if (value === invalid)
      logWarning("invalid setting: the default applies", { setting: name, expected: spec.expected ?? "a whole number ≥ 1", default: String(spec.fallback) });
    out[name] = value === invalid ? spec.fallback : value;
  }
  const result = out as Settings;
  parsed.set(env, result);
  return result;
}

/** docs/configuration.md's table of settings, from SETTINGS (`npm run docs:config` writes it; a test compares). */
export function settingsTable(): string {
  const rows = (Object.entries(SETTINGS) as Array<[SettingName, Spec<unknown>]>).map(
    ([name, s]) => `| \`${name}\` | ${s.kind} | ${s.doc}${s.shown ? ` (default ${s.shown})` : ""} |`,
  );
  return ["| Name | Kind | Meaning |", "|---|---|---|", ...rows].join("\n");
}
