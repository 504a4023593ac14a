import type { PricedEndpoint } from "../catalog/catalog";
import type { Cutoff, ProviderPreferences } from "../request/provider-preferences";

/** Measured figures of one endpoint (p50…p99) over the last 30 min. */
export type Percentiles = { p50?: number; p75?: number; p90?: number; p99?: number };
/**
 * `throughput` in tokens/s; `latency` (time to first token) in SECONDS, the unit of the contract's
 * `preferred_max_latency` (the snapshot and the public API keep milliseconds; src/health/routing-health.ts
 * converts). `uptime5m`: percent over the last 5 min, null when no attempt counted; `counted5m`: the
 * attempts it counted; `consecutiveFailures`: this isolate's current failure streak (src/health/isolate-health.ts).
 */
export type EndpointHealth = { throughput?: Percentiles; latency?: Percentiles; uptime5m?: number | null; counted5m?: number; consecutiveFailures?: number };

/** What the routing decision needs to know about the request besides its preferences. */
export interface OrderFacts {
  /** The parameter names the request uses (`requestParameters`), for `require_parameters`. */
  parameters: string[];
  /**
   * What an endpoint would take otherwise than asked (its catalog capabilities: a forced tool choice sent as
   * `auto`, reasoning off at the lowest effort), for `require_parameters`: such an endpoint is left out.
   */
  adapted?: (endpoint: PricedEndpoint) => string[];
  /**
   * Live health of an endpoint of the requested model (`routingHealth`: the snapshot and this isolate's streaks, by model and carrier). Without
   * it, throughput/latency sorting and the preferred_* cutoffs leave the order as it is.
   */
  health?: (endpoint: PricedEndpoint) => EndpointHealth | undefined;
}

export type Routed = { endpoints: PricedEndpoint[] } | { emptiedBy: string; message: string };

type Filter = { name: string; keep: (e: PricedEndpoint) => boolean; why: string };

/**
 * The model's endpoints, filtered and ordered by the request's `provider` preferences.
 * `endpoints` come in the default order (balanced by price, or cheapest first), which stays unless a preference changes it. Hard filters run in
 * the contract's field order; the first that leaves nothing is named.
 */
export function orderEndpoints(endpoints: PricedEndpoint[], prefs: ProviderPreferences | null | undefined, facts: OrderFacts): Routed {
  if (!prefs) return { endpoints };
  let list = endpoints;
  for (const f of filters(prefs, facts)) {
    list = list.filter(f.keep);
    if (list.length === 0) return emptied(f.name, f.why);
  }
  list = sortBy(list, prefs, facts);
  list = softPreferences(list, prefs, facts);

  const order = prefs.order ?? [];
  const listed = order.flatMap((name) => list.filter((e) => names(e, [name])));
  const unique = [...new Set(listed)];
  if (prefs.allow_fallbacks === false) {
    // Without fallbacks only the listed carriers are tried; without `order`, only the first.
    const only = order.length ? unique : list.slice(0, 1);
    if (only.length === 0) return emptied("order", "none of the carriers in `provider.order` serves this model and `allow_fallbacks` is false");
    return { endpoints: only };
  }
  return { endpoints: [...unique, ...list.filter((e) => !unique.includes(e))] };
}

function emptied(filter: string, why: string) {
  return { emptiedBy: filter, message: `No endpoints found that match your provider preferences: ${why} (provider.${filter}).` };
}

/** Case-insensitive: a carrier is named by its slug or its display name. */
function names(e: PricedEndpoint, list: string[]): boolean {
  const slug = e.providerEntry.slug.toLowerCase();
  const name = e.providerEntry.name.toLowerCase();
  return list.some((n) => n.toLowerCase() === slug || n.toLowerCase() === name);
}

function filters(p: ProviderPreferences, facts: OrderFacts): Filter[] {
  const out: Filter[] = [];
  if (p.only) out.push({ name: "only", keep: (e) => names(e, p.only!), why: "no carrier in `only` serves this model" });
  if (p.ignore) out.push({ name: "ignore", keep: (e) => !names(e, p.ignore!), why: "every carrier of this model is in `ignore`" });
  if (p.quantizations)
    out.push({
      name: "quantizations",
      keep: (e) => p.quantizations!.some((q) => q === (e.quantization ?? "unknown")),
      why: "no carrier serves this model at the quantizations allowed",
    });
  // A carrier without a declared data policy is treated as collecting: it cannot be vouched for.
  if (p.data_collection === "deny")
    out.push({
      name: "data_collection",
      keep: (e) => e.providerEntry.data_policy?.retains_prompts === false && e.providerEntry.data_policy.trains_on_prompts === false,
      why: "every carrier of this model retains or trains on prompts",
    });
  if (p.zdr === true)
    out.push({ name: "zdr", keep: (e) => e.providerEntry.data_policy?.zdr === true, why: "no carrier of this model has zero data retention" });
  if (p.require_parameters === true) {
    const missing = (e: PricedEndpoint) => facts.parameters.filter((x) => !e.supportedParameters.includes(x));
    out.push({
      name: "require_parameters",
      keep: (e) => missing(e).length === 0 && (facts.adapted?.(e).length ?? 0) === 0,
      why: `no carrier of this model supports every parameter sent as sent (${facts.parameters.join(", ")}; a model that always thinks takes no reasoning off, and one may refuse a forced tool_choice while thinking)`,
    });
  }
  const max = p.max_price;
  if (max) {
    // Carriers here charge per token only: their request, image and audio prices are 0, which no
    // (non-negative) limit excludes, so only prompt and completion can filter.
    const under = (price: number, limit: number | undefined) => limit === undefined || price <= limit;
    out.push({
      name: "max_price",
      keep: (e) => under(e.input_price_per_1m, max.prompt) && under(e.output_price_per_1m, max.completion),
      why: "every carrier of this model costs more than `max_price`",
    });
  }
  return out;
}

function sortKind(p: ProviderPreferences) {
  return typeof p.sort === "string" ? p.sort : (p.sort?.by ?? undefined);
}

/** `price`: input + output USD per token, cheapest first (ties keep catalog order). */
function sortBy(list: PricedEndpoint[], p: ProviderPreferences, facts: OrderFacts): PricedEndpoint[] {
  const kind = sortKind(p);
  if (kind === "price") return [...list].sort((a, b) => a.inputNano + a.outputNano - (b.inputNano + b.outputNano));
  if ((kind === "throughput" || kind === "latency") && facts.health) {
    // Higher throughput / lower latency first; endpoints without a figure keep their order, after those with one.
    const sign = kind === "throughput" ? -1 : 1;
    const figure = (e: PricedEndpoint) => facts.health!(e)?.[kind]?.p50;
    return [...list].sort((a, b) => {
      const fa = figure(a),
        fb = figure(b);
      if (fa === undefined || fb === undefined) return (fa === undefined ? 1 : 0) - (fb === undefined ? 1 : 0);
      return sign * (fa - fb);
    });
  }
  // `exacto` and throughput/latency without measurements: the default order.
  return list;
}

/** Endpoints that miss a preferred cutoff move to the back (stable), never out; unmeasured ones stay. */
function softPreferences(list: PricedEndpoint[], p: ProviderPreferences, facts: OrderFacts): PricedEndpoint[] {
  const health = facts.health;
  if (!health || (p.preferred_min_throughput == null && p.preferred_max_latency == null)) return list;
  const misses = (e: PricedEndpoint) => {
    const h = health(e);
    return missesCutoff(h?.throughput, p.preferred_min_throughput, (v, c) => v < c) || missesCutoff(h?.latency, p.preferred_max_latency, (v, c) => v > c);
  };
  return [...list.filter((e) => !misses(e)), ...list.filter(misses)];
}

function missesCutoff(figures: Percentiles | undefined, cutoff: Cutoff, worse: (value: number, cutoff: number) => boolean): boolean {
  if (cutoff == null || !figures) return false;
  const cutoffs: { [k in keyof Percentiles]?: number | null } = typeof cutoff === "number" ? { p50: cutoff } : cutoff;
  return (["p50", "p75", "p90", "p99"] as const).some((k) => {
    const c = cutoffs[k],
      v = figures[k];
    return c != null && v !== undefined && worse(v, c);
  });
}
