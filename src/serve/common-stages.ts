import type { PricedEndpoint } from "../catalog/catalog";
import { loadCatalog } from "../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../protocols/outbound";
import type { Demand } from "../request/hold";
import { failedOutcome } from "../request/outcome";
import type { RouteQuery } from "../routing/route-query";
import { dispatch } from "../carriers/dispatch";
import type { CarrierCall, WireRequest } from "../carriers/carrier-call";
import type { AttemptFailure } from "../carriers/attempts";
import type { RequestFacts } from "./request-facts";
import { abandonedRecord, type RequestTrail } from "./settle";
import { planRequest, type Planned } from "./plan";
import { admit } from "./admit";
import type { Admission, Served, Stages } from "./stages";

// The stages every API shares between reading its request and answering: plan, admit, dispatch.

/** Catalog → routing of the API's route query (src/serve/plan.ts): the plan, or its refusal. */
export async function planFor(facts: RequestFacts, query: RouteQuery): Promise<Planned> {
  return planRequest(facts, query, await loadCatalog(facts.env, CARRIER_PROTOCOL_NAMES, facts.waitUntil));
}

/** The ledger's admission (src/serve/admit.ts) of `demand` on the planned endpoints; should the request die unsettled, the ledger keeps the record its stages so far make. */
export function admitFor(
  facts: RequestFacts,
  trail: RequestTrail,
  stages: Stages,
  demand: Demand,
  endpoints: PricedEndpoint[],
  modelId: string,
  keyDemand?: Demand,
): Promise<Admission> {
  const abandoned = () =>
    abandonedRecord(facts, trail, stages, failedOutcome(500, "The request ended without settling (the Worker was stopped); nothing was charged."));
  return admit(facts, demand, endpoints, modelId, abandoned, keyDemand);
}

/** How one API's request goes to carriers: each endpoint's wire request, and what makes an answer usable (`accept`). */
export type Dispatch<T> = {
  bodyFor: (endpoint: PricedEndpoint) => WireRequest;
  stream: boolean;
  accept: (call: CarrierCall, endpoint: PricedEndpoint) => Promise<T>;
  /** What the caller asked for, as the error of an exhausted dispatch names it. */
  label: string;
  /** Endpoints left out before any attempt, with why (named first when all fail). */
  skipped?: AttemptFailure[];
};

/**
 * The admitted endpoints in order until one answers usably (src/carriers/dispatch.ts): what served, named
 * as the caller sent the id of its candidate, with the completion cap the router set on it; its call and accepted value.
 */
export async function dispatchFor<T>(
  facts: RequestFacts,
  trail: RequestTrail,
  candidateOf: ReadonlyMap<PricedEndpoint, { answerAs: string }>,
  admission: Admission,
  d: Dispatch<T>,
): Promise<{ served: Served; call: CarrierCall; value: T }> {
  const { endpoint, charged, call, value } = await dispatch(
    facts.carriers,
    d.label,
    admission.endpoints,
    d.bodyFor,
    d.stream,
    d.accept,
    trail.attempts,
    facts.signal,
    d.skipped,
  );
  // What served is priced by the request's copy of its endpoint (the fee, when served with the account's own key).
  return { served: { endpoint: charged, model: candidateOf.get(endpoint)!.answerAs, adjustedMaxTokens: admission.caps.get(endpoint) ?? null }, call, value };
}
