import type { ApiKey } from "../db/schema";
import type { KeyUsage } from "./key-usage";
import { nanoToUsd } from "../catalog/money";
import { limitRemainingNano } from "./key-budget";

const iso = (ms: number) => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** A key's limit, in USD, and what is left of it in the current window (docs/api.md, Key management API). */
export function limitFields(key: ApiKey, usage: KeyUsage) {
  const remaining = limitRemainingNano(key, usage);
  return {
    limit: key.limitNano === null ? null : nanoToUsd(key.limitNano),
    limit_remaining: remaining === null ? null : nanoToUsd(remaining),
    limit_reset: key.limitReset,
    include_byok_in_limit: key.includeByokInLimit,
  };
}

/** Usage in USD: what the key was debited, and (`byok_*`) what carriers charged the account's own keys for its BYOK requests (docs/byok.md). */
export function usageFields(usage: KeyUsage) {
  return {
    usage: nanoToUsd(usage.usageNano),
    usage_daily: nanoToUsd(usage.dailyNano),
    usage_weekly: nanoToUsd(usage.weeklyNano),
    usage_monthly: nanoToUsd(usage.monthlyNano),
    byok_usage: nanoToUsd(usage.byokNano),
    byok_usage_daily: nanoToUsd(usage.byokDailyNano),
    byok_usage_weekly: nanoToUsd(usage.byokWeeklyNano),
    byok_usage_monthly: nanoToUsd(usage.byokMonthlyNano),
  };
}

/** The contract's key object of `/keys` and `/keys/{hash}`. */
export function presentManagedKey(key: ApiKey, usage: KeyUsage, workspaceId: string) {
  return {
    hash: key.hash,
    name: key.name,
    label: key.label,
    disabled: key.disabled,
    ...limitFields(key, usage),
    ...usageFields(usage),
    created_at: iso(key.createdAt),
    updated_at: isoOrNull(key.updatedAt),
    expires_at: isoOrNull(key.expiresAt),
    creator_user_id: key.accountId,
    workspace_id: workspaceId,
    // Not in the contract's key (which allows more fields): the answer cache's TTL for the key's requests, null = only when asked (docs/caching.md).
    response_cache_ttl_seconds: key.answerCacheTtlS ?? null,
  };
}
