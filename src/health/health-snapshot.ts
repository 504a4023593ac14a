import type { Env } from "../env";
import { foldMinutes } from "../db/endpoint-minutes";
import type { EndpointStats } from "./endpoint-stats";

/** KV key (in the CATALOG namespace) of the endpoint health snapshot the Cron Trigger writes. */
export const HEALTH_KV_KEY = "health:v1";

const MINUTE = 60_000;
/** The contract's windows: uptime_last_5m, uptime_last_30m, uptime_last_1d. */
export const UPTIME_WINDOWS_MS = [5 * MINUTE, 30 * MINUTE, 24 * 60 * MINUTE] as const;
/** latency_last_30m, throughput_last_30m. */
export const PERCENTILES_WINDOW_MS = 30 * MINUTE;
/**
 * Minutes are kept this long past their window (a day for the counts, 30 minutes for the histograms):
 * records reach D1 late (a late settle, a retried flush), and a minute pruned early would only be
 * re-made by them and pruned again, so the margin keeps the tables' rows steady.
 */
const PRUNE_MARGIN_MS = 60 * MINUTE;

/** [p50, p75, p90, p99]. */
export type PercentileTuple = [number, number, number, number];
/** One endpoint (model, carrier slug): up and counted attempts per uptime window; percentiles over 30 min, absent without samples. */
export type EndpointFigures = { up: number[]; counted: number[]; latencyMs?: PercentileTuple; tokensPerSecond?: PercentileTuple };
/** `endpoints[model id][carrier slug]`; `at` = when the Cron Trigger computed it (Unix ms), 0 = no snapshot. */
export type HealthSnapshot = { at: number; endpoints: Record<string, Record<string, EndpointFigures>> };
export const EMPTY_SNAPSHOT: HealthSnapshot = { at: 0, endpoints: {} };

/**
 * The Cron Trigger's fold: every endpoint's figures from the minute rollups of recorded attempts (one D1
 * batch, which also prunes minutes past their window and margin), written to KV. Never run on a request.
 * Attempts carry the catalog model id they were for, so requests to `router/auto` or with a `models`
 * list count toward the model that was actually tried. A window starts at the start of the minute its
 * first moment falls in (it may reach up to a minute further back, never less far).
 */
export async function refreshHealth(env: Env, now = Date.now()): Promise<HealthSnapshot> {
  const folded = await foldMinutes(
    env.DB,
    UPTIME_WINDOWS_MS.map((w) => now - w),
    now - PERCENTILES_WINDOW_MS,
    now - UPTIME_WINDOWS_MS[2] - PRUNE_MARGIN_MS,
    now - PERCENTILES_WINDOW_MS - PRUNE_MARGIN_MS,
  );
  const snapshot: HealthSnapshot = { at: now, endpoints: {} };
  const figures = (model: string, provider: string) => ((snapshot.endpoints[model] ??= {})[provider] ??= { up: [0, 0, 0], counted: [0, 0, 0] });
  for (const r of folded.uptime) Object.assign(figures(r.model, r.provider), { up: r.up, counted: r.counted });
  for (const r of folded.percentiles) figures(r.model, r.provider)[r.metric === "latency" ? "latencyMs" : "tokensPerSecond"] = r.values as PercentileTuple;
  await env.CATALOG.put(HEALTH_KV_KEY, JSON.stringify(snapshot));
  return snapshot;
}

export function parseSnapshot(raw: string | null): HealthSnapshot | undefined {
  if (raw === null) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<HealthSnapshot>;
    return typeof parsed.at === "number" && typeof parsed.endpoints === "object" && parsed.endpoints !== null ? (parsed as HealthSnapshot) : undefined;
  } catch {
    return undefined;
  }
}

/** Uptime as the contract defines it: up / counted × 100; null for a window without counted attempts. */
export function uptimePercent(f: EndpointFigures | undefined, window: 0 | 1 | 2): number | null {
  const counted = f?.counted[window] ?? 0;
  return counted > 0 ? ((f?.up[window] ?? 0) / counted) * 100 : null;
}

/**
 * A model's public figures per carrier slug. Latency and throughput percentiles only when
 * `withPercentiles` (the contract shows them to callers with an API key); null without samples.
 */
export function endpointStats(snapshot: HealthSnapshot, modelId: string, withPercentiles: boolean): (carrierSlug: string) => EndpointStats {
  const stats = (t: PercentileTuple | undefined) => (withPercentiles && t ? { p50: t[0], p75: t[1], p90: t[2], p99: t[3] } : null);
  return (slug) => {
    const f = snapshot.endpoints[modelId]?.[slug];
    return {
      uptime_last_5m: uptimePercent(f, 0),
      uptime_last_30m: uptimePercent(f, 1),
      uptime_last_1d: uptimePercent(f, 2),
      latency_last_30m: stats(f?.latencyMs),
      throughput_last_30m: stats(f?.tokensPerSecond),
    };
  };
}
