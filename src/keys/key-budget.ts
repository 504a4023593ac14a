import type { ApiKey } from "../db/schema";
import type { KeyUsage } from "./key-usage";
import type { LimitReset } from "./usage-windows";

export type { LimitReset };
/** The largest credit limit a key may be given, in USD (through /keys and the console). */
export const MAX_KEY_LIMIT_USD = 1_000_000;

export const LIMIT_RESETS = ["daily", "weekly", "monthly"] as const satisfies readonly LimitReset[];

/**
 * The usage a key's limit is measured against: that of the current UTC day, week (from Monday) or
 * month when the limit resets, else all usage ever — with its BYOK usage when the key includes it
 * (`include_byok_in_limit`). The one rule behind every `limit_remaining`.
 */
export function windowUsageNano(reset: LimitReset | null, usage: KeyUsage, withByok = false): number {
  const [debited, byok] = ((): [number, number] => {
    switch (reset) {
      case "daily":
        return [usage.dailyNano, usage.byokDailyNano];
      case "weekly":
        return [usage.weeklyNano, usage.byokWeeklyNano];
      case "monthly":
        return [usage.monthlyNano, usage.byokMonthlyNano];
      case null:
        return [usage.usageNano, usage.byokNano];
    }
  })();
  return debited + (withByok ? byok : 0);
}

/** What is left of a key's limit in its current window (never below 0); null when the key has no limit. */
export function limitRemainingNano(
  key: Pick<ApiKey, "limitNano" | "limitReset"> & Partial<Pick<ApiKey, "includeByokInLimit">>,
  usage: KeyUsage,
): number | null {
  if (key.limitNano === null) return null;
  return Math.max(0, key.limitNano - windowUsageNano(key.limitReset, usage, key.includeByokInLimit === true));
}
