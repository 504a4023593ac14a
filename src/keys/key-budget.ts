import type { ApiKey } from "../db/schema";
import type { KeyUsage } from "./key-usage";
import type { LimitReset } from "./usage-windows";

export type { LimitReset };
/** The largest credit limit a key may be given, in USD (through /keys and the console). */
export const MAX_KEY_LIMIT_USD = 1_000_000;

export const LIMIT_RESETS = ["daily", "weekly", "monthly"] as const satisfies readonly LimitReset[];

/**
 * The usage a key's limit is measured against: that of the current UTC day, week (from Monday) or
 * month when the limit resets, else all usage ever. The one rule behind every `limit_remaining`.
 */
export function windowUsageNano(reset: LimitReset | null, usage: KeyUsage): number {
  switch (reset) {
    case "daily":
      return usage.dailyNano;
    case "weekly":
      return usage.weeklyNano;
    case "monthly":
      return usage.monthlyNano;
    case null:
      return usage.usageNano;
  }
}

/** What is left of a key's limit in its current window (never below 0); null when the key has no limit. */
export function limitRemainingNano(key: Pick<ApiKey, "limitNano" | "limitReset">, usage: KeyUsage): number | null {
  if (key.limitNano === null) return null;
  return Math.max(0, key.limitNano - windowUsageNano(key.limitReset, usage));
}
