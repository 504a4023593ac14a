import type { Settings } from "../settings";
import type { EndpointHealth } from "./order-endpoints";

/** When an endpoint counts as down (docs/routing.md, Endpoint health). */
export type HealthThresholds = {
  /** This isolate saw at least this many failures in a row (and the last one recently). */
  consecutiveFailures: number;
  /** Or its uptime over the last 5 min is below this percent… */
  outageUptimePercent: number;
  /** …over at least this many counted attempts (fewer say too little). */
  minAttempts: number;
};

/** The settings health thresholds are read from. */
export type HealthSettings = Pick<Settings, "HEALTH_CONSECUTIVE_FAILURES" | "HEALTH_OUTAGE_UPTIME_PERCENT" | "HEALTH_MIN_ATTEMPTS">;

export function healthThresholds(s: HealthSettings): HealthThresholds {
  return { consecutiveFailures: s.HEALTH_CONSECUTIVE_FAILURES, outageUptimePercent: s.HEALTH_OUTAGE_UPTIME_PERCENT, minAttempts: s.HEALTH_MIN_ATTEMPTS };
}

export function isDown(h: EndpointHealth | undefined, t: HealthThresholds): boolean {
  if (!h) return false;
  if ((h.consecutiveFailures ?? 0) >= t.consecutiveFailures) return true;
  return h.uptime5m != null && (h.counted5m ?? 0) >= t.minAttempts && h.uptime5m < t.outageUptimePercent;
}

/**
 * Endpoints that look down move to the back, in their order (stable); none is removed, so when every
 * endpoint is down they are all still tried, in the order given. Pure: health comes in through `healthOf`.
 */
export function demoteUnhealthy<E>(endpoints: readonly E[], healthOf: (e: E) => EndpointHealth | undefined, t: HealthThresholds): E[] {
  const down = endpoints.map((e) => isDown(healthOf(e), t));
  return [...endpoints.filter((_, i) => !down[i]), ...endpoints.filter((_, i) => down[i])];
}
