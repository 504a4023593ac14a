import type { Settings } from "../settings";
import { NANO_PER_USD } from "../catalog/money";

/**
 * Rate limits on free models, per account (docs/api.md, Rate limits on free models). Counted by the account's ledger in
 * the admission of each free request: a sliding minute and the UTC day, exact.
 */
export type FreeLimits = {
  perMinute: number;
  /** Requests a UTC day while the account's credit grants total less than `boughtNano`. */
  perDay: number;
  /** Requests a UTC day once they total `boughtNano` or more. */
  perDayBought: number;
  boughtNano: number;
};

/** Refused by a free-model rate limit: which window, its limit, when a request may be admitted again (ms epoch) and in how many seconds (≥ 1). */
export type FreeLimitHit = { window: "minute" | "day"; limit: number; resetAt: number; retryAfterS: number };

/** The free-model limits from the settings the request read when it opened. */
export function freeLimits(
  s: Pick<Settings, "FREE_REQUESTS_PER_MINUTE" | "FREE_REQUESTS_PER_DAY" | "FREE_REQUESTS_PER_DAY_BOUGHT" | "FREE_BOUGHT_THRESHOLD_USD">,
): FreeLimits {
  return {
    perMinute: s.FREE_REQUESTS_PER_MINUTE,
    perDay: s.FREE_REQUESTS_PER_DAY,
    perDayBought: s.FREE_REQUESTS_PER_DAY_BOUGHT,
    boughtNano: s.FREE_BOUGHT_THRESHOLD_USD * NANO_PER_USD,
  };
}
