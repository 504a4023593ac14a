import type { PricedEndpoint } from "../catalog/catalog";
import type { Candidate } from "./candidate-models";
import { orderEndpoints, type RequestFacts } from "./order-endpoints";
import type { ProviderPreferences } from "./provider-preferences";
import { withShortcutSort } from "./model-shortcuts";
import { demoteUnhealthy, type HealthThresholds } from "./health-order";

/** A model whose endpoints the request's filters all removed, and why. */
export type Emptied = { modelId: string; emptiedBy: string; message: string };

/**
 * Every endpoint the request may be tried on, in order: each candidate model's endpoints filtered and
 * ordered by the preferences (and that model's shortcut sort), model after model. Endpoints that look
 * down (`facts.health`, `thresholds`) go to the back of their model's list, unless the caller set
 * `provider.order` (an explicit order is kept). `emptied` lists the models left without an endpoint;
 * when it holds every candidate, nothing can be tried.
 */
export function planRoute(
  candidates: Candidate[],
  endpointsOf: (modelId: string) => PricedEndpoint[],
  prefs: ProviderPreferences | null | undefined,
  facts: RequestFacts,
  thresholds: HealthThresholds,
): { endpoints: PricedEndpoint[]; emptied: Emptied[] } {
  const demote = facts.health && !prefs?.order?.length ? facts.health : null;
  const endpoints: PricedEndpoint[] = [];
  const emptied: Emptied[] = [];
  for (const c of candidates) {
    const routed = orderEndpoints(endpointsOf(c.modelId), withShortcutSort(prefs, c.sort), facts);
    if ("emptiedBy" in routed) emptied.push({ modelId: c.modelId, ...routed });
    else endpoints.push(...(demote ? demoteUnhealthy(routed.endpoints, demote, thresholds) : routed.endpoints));
  }
  return { endpoints, emptied };
}
