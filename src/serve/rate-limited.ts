import type { FreeLimitHit } from "../ledger/free-limits";
import { ApiError } from "../request/errors";

/**
 * The 429 for a free-model request over the account's rate limit, as OpenRouter answers it:
 * `metadata.error_type: "rate_limit_exceeded"`, `X-RateLimit-Reset` in ms epoch, `Retry-After` in seconds.
 */
export function rateLimited(hit: FreeLimitHit, modelId: string, creditsUrl: string): ApiError {
  const reset = new Date(hit.resetAt).toISOString();
  const message =
    hit.window === "minute"
      ? `Rate limit exceeded: at most ${hit.limit} requests a minute to free models per account (${modelId} is free). Retry after ${reset}.`
      : `Rate limit exceeded: at most ${hit.limit} requests a UTC day to free models per account; the count resets at ${reset}. Accounts that have bought more credits may get a higher daily limit (${creditsUrl}); paid models are not limited.`;
  return new ApiError(
    429,
    message,
    { error_type: "rate_limit_exceeded", window: hit.window },
    {
      "X-RateLimit-Limit": String(hit.limit),
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": String(hit.resetAt),
      "Retry-After": String(hit.retryAfterS),
    },
  );
}
