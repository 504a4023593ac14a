import { ApiError } from "../request/errors";

/** What the request asked of the answer cache: to use it, and for how long a stored answer is served (seconds). */
export type CacheAsk = { ttlS: number } | null;

/** The cache's settings a request's ask is read against. */
export type CacheAskLimits = { defaultTtlS: number; maxTtlS: number };

/**
 * The request's ask of the answer cache, as OpenRouter's headers say it (docs/caching.md): `X-OpenRouter-Cache:
 * true` opts in, `false` opts out (whatever the key says); absent, the key's own setting decides (`keyTtlS`:
 * its TTL when the key opts in, else null). `X-OpenRouter-Cache-TTL` sets the TTL in whole seconds, 1 to the
 * maximum. Any other value of either header is a 400: a typo must not silently pay for a carrier call.
 */
export function cacheAsk(headers: Headers, limits: CacheAskLimits, keyTtlS: number | null = null): CacheAsk {
  const flag = headers.get("x-openrouter-cache")?.trim().toLowerCase();
  if (flag !== undefined && flag !== "true" && flag !== "false")
    throw new ApiError(400, "X-OpenRouter-Cache must be `true` (serve identical requests from the answer cache) or `false`.");
  if (flag === "false" || (flag === undefined && keyTtlS === null)) return null;
  const ttl = headers.get("x-openrouter-cache-ttl");
  if (ttl === null) return { ttlS: Math.min(keyTtlS ?? limits.defaultTtlS, limits.maxTtlS) };
  const n = Number(ttl.trim());
  if (!/^\d+$/.test(ttl.trim()) || !Number.isSafeInteger(n) || n < 1 || n > limits.maxTtlS)
    throw new ApiError(400, `X-OpenRouter-Cache-TTL must be a whole number of seconds from 1 to ${limits.maxTtlS}.`);
  return { ttlS: n };
}
