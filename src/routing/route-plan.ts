import type { PricedEndpoint } from "../catalog/catalog";
import type { Candidate } from "./candidate-models";
import { orderEndpoints, type OrderFacts } from "./order-endpoints";
import { withShortcutSort } from "./model-shortcuts";
import { demoteUnhealthy, healthThresholds, type HealthSettings, type HealthThresholds } from "./health-order";
import { balancing, routingRandom } from "./routing-random";
import type { Settings } from "../settings";
import { fitRequest, type CapTooHigh, type Capped, type TooLong, type Unproducible, type Unsupported } from "./request-fit";
import { balanceByPrice } from "./price-balance";
import type { RouteQuery } from "./route-query";

/** A model whose endpoints the request's filters all removed, and why. */
export type Emptied = { modelId: string; emptiedBy: string; message: string };

/** How routing is set up for this deployment (its settings), the same for every request but for a session's seed. */
export type RoutePolicy = { thresholds: HealthThresholds; random: (() => number) | null };

/** The settings routing reads. */
export type RoutingSettings = HealthSettings & Pick<Settings, "ROUTING_SEED" | "ROUTING_BALANCE">;

/** The deployment's routing policy for one request; its session (`sticky`) seeds the balancing. */
export function routePolicy(s: RoutingSettings, sticky?: { accountId: string; id: string }): RoutePolicy {
  return { thresholds: healthThresholds(s), random: balancing(s) ? routingRandom(s, sticky) : null };
}

export type RoutePlan = {
  endpoints: PricedEndpoint[];
  /** Models that do not take a kind of part the request carries. */
  unsupported: Unsupported[];
  /** The candidate each endpoint is tried for (the first that listed it): the one the answer names when it serves. */
  candidateOf: Map<PricedEndpoint, Candidate>;
  emptied: Emptied[];
  tooLong: TooLong[];
  /** Models that cannot produce an output modality the request asks for. */
  unproducible: Unproducible[];
  /** Models none of whose endpoints returns as many completion tokens as the request's cap. */
  capTooHigh: CapTooHigh[];
  /** Endpoints of the models that do serve, left out because their maximum output is below the request's cap: named as not tried. */
  capped: Capped[];
};

/**
 * Every endpoint the request may be tried on, in order, model after model. For each candidate model:
 * 1. the endpoints the request fits (the model takes its media parts and produces its output modalities,
 *    completion cap, context, tools/format support: `fitRequest`);
 * 2. without `provider.order` and without a sort (the caller's or a shortcut's), load balanced by price
 *    (`policy.random`; null = cheapest first);
 * 3. the `provider` preferences: hard filters, sort, soft preferences, `order`, `allow_fallbacks`;
 * 4. endpoints that look down (`facts.health`) to the back, unless the caller set `provider.order`.
 * An endpoint an earlier candidate already lists (the same model under another sort: `m:floor` then `m`)
 * is tried once, for that earlier candidate. `unsupported` lists models that do not take a kind of media part the request carries, `tooLong` models without room for it,
 * `unproducible` those without an output modality it asks for, `capTooHigh` those whose every endpoint returns fewer
 * completion tokens than its cap (`capped`: such endpoints of the models that serve), `emptied` those the preferences emptied.
 */
export function planRoute(
  candidates: Candidate[],
  endpointsOf: (modelId: string) => PricedEndpoint[],
  query: Pick<RouteQuery, "provider" | "need">,
  facts: OrderFacts,
  policy: RoutePolicy,
): RoutePlan {
  const plan: RoutePlan = { endpoints: [], unsupported: [], candidateOf: new Map(), emptied: [], tooLong: [], unproducible: [], capTooHigh: [], capped: [] };
  const ordered = !!query.provider?.order?.length;
  for (const c of candidates) {
    const all = endpointsOf(c.modelId);
    if (all.length === 0) continue;
    const fit = fitRequest(all, query.need(all[0]!.partTokens));
    if ("unsupported" in fit) {
      plan.unsupported.push(fit.unsupported);
      continue;
    }
    if ("tooLong" in fit) {
      plan.tooLong.push(fit.tooLong);
      continue;
    }
    if ("unproducible" in fit) {
      plan.unproducible.push(fit.unproducible);
      continue;
    }
    if ("capTooHigh" in fit) {
      plan.capTooHigh.push(fit.capTooHigh);
      continue;
    }
    plan.capped.push(...fit.capped);
    const prefs = withShortcutSort(query.provider, c.sort);
    const sorted = prefs?.sort !== undefined && prefs.sort !== null;
    const start = policy.random && !ordered && !sorted ? balanceByPrice(fit.endpoints, policy.random) : fit.endpoints;
    const routed = orderEndpoints(start, prefs, facts);
    if ("emptiedBy" in routed) plan.emptied.push({ modelId: c.modelId, ...routed });
    else
      for (const e of facts.health && !ordered ? demoteUnhealthy(routed.endpoints, facts.health, policy.thresholds) : routed.endpoints) {
        if (plan.candidateOf.has(e)) continue;
        plan.candidateOf.set(e, c);
        plan.endpoints.push(e);
      }
  }
  return plan;
}
