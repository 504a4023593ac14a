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
  return new ApiError(429, message, { error_type: "rate_limit_exceeded", window: hit.window }, rateLimitHeaders(hit.limit, hit.resetAt, hit.retryAfterS));
}

/** The same 429 for a key over its token-count limit (COUNT_TOKENS_PER_MINUTE): a slot frees `retryAfterMs` from `now`. */
export function tokenCountRateLimited(limit: number, retryAfterMs: number, now: number): ApiError {
  const resetAt = now + retryAfterMs;
  return new ApiError(
    429,
    `Rate limit exceeded: at most ${limit} token counts a minute per API key. Retry after ${new Date(resetAt).toISOString()}.`,
    { error_type: "rate_limit_exceeded", window: "minute" },
    rateLimitHeaders(limit, resetAt, Math.max(1, Math.ceil(retryAfterMs / 1000))),
  );
}

function rateLimitHeaders(limit: number, resetAt: number, retryAfterS: number): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Reset": String(resetAt),
    "Retry-After": String(retryAfterS),
  };
}
