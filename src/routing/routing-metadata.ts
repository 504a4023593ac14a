import type { PricedEndpoint } from "../catalog/catalog";
import type { Strategy } from "./candidate-models";

export type RouterAttempt = { provider: string; model: string; status: number };

/** `X-OpenRouter-Metadata` (or the legacy `X-OpenRouter-Experimental-Metadata`): "enabled", "disabled", or a value we refuse. */
export function metadataLevel(headers: Headers): "enabled" | "disabled" | { invalid: string } {
  const raw = headers.get("x-openrouter-metadata") ?? headers.get("x-openrouter-experimental-metadata");
  if (raw === null) return "disabled";
  const level = raw.trim().toLowerCase();
  return level === "enabled" || level === "disabled" ? level : { invalid: raw.slice(0, 40) };
}

/**
 * The contract's OpenRouterMetadata: what was asked for, how it was routed, the endpoints the request
 * could use (in the order they would be tried, the one that served marked) and every attempt made.
 */
export function routingMetadata(m: {
  requested: string;
  strategy: Strategy;
  available: PricedEndpoint[];
  selected: PricedEndpoint | null;
  attempts: RouterAttempt[];
  /** Request fields the serving carrier's protocol left out (it has no such parameter). */
  dropped?: string[];
  /** Tools the request declared that no carrier here runs (hosted tools), left out. */
  droppedTools?: string[];
  /** Request fields the router does not know: passed on as sent to carriers that speak the caller's protocol, left out by the others. */
  unknown?: string[];
  /** Endpoints of the candidate models never sent the request, and why (a maximum output below its cap, a cost the hold cannot pay). */
  notTried?: Array<{ provider: string; model: string; reason: string }>;
  /** Parameters the router set on the serving carrier, and to what (a completion cap the balance could pay). */
  adjusted?: Record<string, number> | undefined;
}) {
  const selectedName = m.selected?.providerEntry.name ?? "none";
  return {
    requested: m.requested,
    strategy: m.strategy,
    // No regional routing: requests are served from wherever the Worker runs.
    region: null,
    summary: `available=${m.available.length}, selected=${selectedName}, attempts=${m.attempts.length}`,
    attempt: m.attempts.length,
    is_byok: m.selected?.byokFeeMilli !== undefined,
    endpoints: {
      total: m.available.length,
      available: m.available.map((e) => ({
        model: e.modelId,
        provider: e.providerEntry.name,
        selected: e.modelId === m.selected?.modelId && e.provider === m.selected.provider,
      })),
    },
    attempts: m.attempts,
    // RouterParams takes any field: what the carrier that served could not be sent, and what the router set on it.
    ...(m.dropped?.length || m.droppedTools?.length || m.adjusted || m.notTried?.length || m.unknown?.length
      ? {
          params: {
            ...(m.notTried?.length ? { not_tried: m.notTried } : {}),
            ...(m.dropped?.length ? { dropped_parameters: m.dropped } : {}),
            ...(m.droppedTools?.length ? { dropped_tools: m.droppedTools } : {}),
            ...(m.unknown?.length ? { unknown_parameters: m.unknown } : {}),
            ...(m.adjusted ? { adjusted_parameters: m.adjusted } : {}),
          },
        }
      : {}),
  };
}
