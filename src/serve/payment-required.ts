import type { ApiKey } from "../db/schema";
import { nanoToUsdString } from "../catalog/money";
import { windowEnd } from "../keys/usage-windows";
import { ApiError } from "../request/errors";

/**
 * The 402 for a refused admission. `metadata.limit_source` tells a key's budget (`key_limit`: raise the
 * key's limit or wait for its reset) from an empty balance (`credits`: add credits).
 */
export function paymentRequired(reason: "balance" | "key_limit", key: ApiKey, modelId: string, origin: string): ApiError {
  const credits = `${origin}/settings/credits`;
  if (reason === "balance")
    return new ApiError(402, `Insufficient credits for ${modelId}: the balance is at or below zero. Add credits at ${credits}`, { limit_source: "credits" });
  const limit = nanoToUsdString(key.limitNano ?? 0);
  const resetsAt = windowEnd(key.limitReset, Date.now());
  const reached =
    resetsAt === null ? `its credit limit of $${limit}` : `its ${key.limitReset} credit limit of $${limit}; it resets at ${new Date(resetsAt).toISOString()}`;
  const message = `This API key has reached ${reached}. Raise the key's limit at ${origin}/settings/keys; the account's credits are added at ${credits}`;
  return new ApiError(402, message, {
    limit_source: "key_limit",
    ...(resetsAt === null ? {} : { limit_reset: key.limitReset, resets_at: new Date(resetsAt).toISOString() }),
  });
}
