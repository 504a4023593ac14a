import type { Env } from "../env";
import type { PricedEndpoint } from "../catalog/catalog";
import type { EndpointHealth, Percentiles } from "../routing/order-endpoints";
import type { Settings } from "../settings";
import { readHealth } from "./health-memo";
import { isolateHealth } from "./isolate-health";
import { uptimePercent, type PercentileTuple } from "./health-snapshot";

export type RoutingHealth = (endpoint: PricedEndpoint) => EndpointHealth;

/**
 * Health for routing one request: the Cron Trigger's snapshot (through the isolate memo: only a fresh
 * isolate's first read waits on KV) joined with this isolate's failure streaks, by (model id, carrier slug).
 * Latency comes out in seconds (`preferred_max_latency`'s unit), throughput in tokens/s.
 */
export async function routingHealth(
  env: Env,
  waitUntil: (p: Promise<unknown>) => void,
  s: Pick<Settings, "HEALTH_FAILURE_MEMORY_S" | "HEALTH_MEMO_MS">,
): Promise<RoutingHealth> {
  const snapshot = await readHealth(env, waitUntil, s.HEALTH_MEMO_MS);
  const memoryMs = s.HEALTH_FAILURE_MEMORY_S * 1000;
  const now = Date.now();
  return (endpoint) => {
    const modelId = endpoint.modelId;
    const slug = endpoint.providerEntry.slug;
    const f = snapshot.endpoints[modelId]?.[slug];
    const h: EndpointHealth = {
      uptime5m: uptimePercent(f, 0),
      counted5m: f?.counted[0] ?? 0,
      consecutiveFailures: isolateHealth().consecutiveFailures(modelId, slug, now, memoryMs),
    };
    if (f?.latencyMs) h.latency = percentiles(f.latencyMs, 1 / 1000);
    if (f?.tokensPerSecond) h.throughput = percentiles(f.tokensPerSecond, 1);
    return h;
  };
}

export function percentiles([p50, p75, p90, p99]: PercentileTuple, scale: number): Required<Percentiles> {
  return { p50: p50 * scale, p75: p75 * scale, p90: p90 * scale, p99: p99 * scale };
}
