import * as z from "zod";
import { parseUsdInput } from "../http/usd-input";
import { NANO_PER_USD, nanoToUsdString } from "../../catalog/money";
import { LIMIT_RESETS, MAX_KEY_LIMIT_USD } from "../../keys/key-budget";
import type { ApiKey } from "../../db/schema";

/**
 * A key's budget and expiry as the console's forms send them (create and edit): a USD limit, how
 * often it resets, whether it counts BYOK usage too (a checkbox: absent means false, so unchecking
 * it on the edit form clears it), and an expiry typed as a UTC date and time. Empty fields mean "none".
 */

/** The form's field names, in the order their errors are listed. */
export const SETTINGS_FIELDS = ["limit", "limit_reset", "include_byok_in_limit", "expires_at"] as const;
export type SettingsField = (typeof SETTINGS_FIELDS)[number];
export type SettingsValues = Partial<Record<SettingsField, string>>;

export const RESET_OPTIONS = [
  { value: "", label: "Never (all usage counts)" },
  { value: "daily", label: "Daily (00:00 UTC)" },
  { value: "weekly", label: "Weekly (Monday 00:00 UTC)" },
  { value: "monthly", label: "Monthly (the 1st, 00:00 UTC)" },
] as const;

/** "2027-12-31T23:59", with optional seconds, a space for the T, or a trailing "Z" / " UTC" → Unix ms; undefined when it is no such date. */
export function parseUtcDateTime(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(?:Z| UTC)?$/i.exec(text.trim());
  if (!m) return undefined;
  const iso = `${m[1]}T${m[2]}${m[3] ?? ":00"}.000Z`;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && new Date(ms).toISOString() === iso ? ms : undefined; // no 30 February
}

/** Unix ms → the expiry field's value, "2027-12-31 23:59:00": UTC to the second, as the page writes dates. */
export function utcDateTimeInput(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

/** The form's values for a key as it is (the edit form's starting point). */
export function settingsValues(key: ApiKey): SettingsValues {
  return {
    limit: key.limitNano === null ? "" : nanoToUsdString(key.limitNano),
    limit_reset: key.limitReset ?? "",
    include_byok_in_limit: key.includeByokInLimit ? "on" : "",
    expires_at: key.expiresAt === null ? "" : utcDateTimeInput(key.expiresAt),
  };
}

/**
 * The fields' schema. `currentExpiry` is the key's expiry when editing: sent back unchanged (to the
 * second) it stays as it is even if it has passed; any other expiry must be in the future.
 */
export function settingsShape(currentExpiry: number | null = null) {
  return {
    limit: z
      .string()
      .trim()
      .optional()
      .transform((v, ctx) => {
        if (!v) return null;
        const nano = parseUsdInput(v);
        if (nano === undefined || nano > MAX_KEY_LIMIT_USD * NANO_PER_USD) {
          ctx.addIssue({ code: "custom", message: "Enter the credit limit as an amount in USD, like 5 or 12.50 (at most 1,000,000), or leave it empty." });
          return z.NEVER;
        }
        return nano;
      }),
    limit_reset: z
      .enum(["", ...LIMIT_RESETS], "Choose when the limit resets.")
      .optional()
      .transform((v) => (v ? v : null)),
    include_byok_in_limit: z
      .literal("on", "Check the box or leave it unchecked.")
      .optional()
      .transform((v) => v === "on"),
    expires_at: z
      .string()
      .trim()
      .optional()
      .transform((v, ctx) => {
        if (!v) return null;
        const ms = parseUtcDateTime(v);
        if (ms === undefined) {
          ctx.addIssue({ code: "custom", message: "Enter the expiry as a date and time in UTC, like 2027-12-31 23:59, or leave it empty." });
          return z.NEVER;
        }
        if (currentExpiry !== null && ms === Math.floor(currentExpiry / 1000) * 1000) return currentExpiry;
        if (ms <= Date.now()) {
          ctx.addIssue({ code: "custom", message: "The expiry must be in the future." });
          return z.NEVER;
        }
        return ms;
      }),
  };
}

/** The first message per field of a failed parse. */
export function fieldErrors<F extends string>(issues: readonly z.core.$ZodIssue[], fields: readonly F[]): Partial<Record<F, string>> {
  const errors: Partial<Record<F, string>> = {};
  for (const i of issues) {
    const f = i.path[0] as F;
    if (fields.includes(f) && !errors[f]) errors[f] = i.message;
  }
  return errors;
}
