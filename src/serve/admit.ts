import { isFree, type PricedEndpoint } from "../catalog/catalog";
import type { NewGeneration } from "../db/schema";
import type { Demand } from "../request/hold";
import { accountLedger } from "../ledger/isolate-ledgers";
import { freeLimits } from "../ledger/free-limits";
import type { RequestFacts } from "./request-facts";
import type { Admission } from "./stages";
import { paymentRequired } from "./payment-required";
import { rateLimited } from "./rate-limited";

/**
 * The ledger's admission: a priced endpoint makes the request paid (key budget and balance must pay at
 * least its least hold; it holds its worst case, or what can be paid with its completion cap lowered to
 * fit); a free one makes it count against the free-model rate limits — in one ledger call. With both,
 * the ledger says which may serve it. Refused: 402 (with what could be afforded) or 429, nothing held.
 * Returns the ticket, the endpoints the request may be served by, and the completion caps the router set.
 * `modelId` is the model a refusal names; `abandoned` the record the ledger keeps should the request die unsettled.
 * `keyDemand`: what a key counting BYOK usage in its limit must have left for the request (include_byok_in_limit,
 * docs/byok.md), when that differs from `demand` (the account's own carrier key may serve): all of it, or a 402.
 */
export async function admit(
  facts: RequestFacts,
  demand: Demand,
  planned: PricedEndpoint[],
  modelId: string,
  abandoned: () => NewGeneration,
  keyDemand?: Demand,
): Promise<Admission> {
  const paid = planned.some((e) => !isFree(e));
  const free = planned.some(isFree);
  const { caller, origin } = facts;
  const admitted = await accountLedger(facts.env, caller.accountId).admit(
    {
      genId: facts.genId,
      keyHash: caller.key.hash,
      limitNano: caller.key.limitNano,
      limitReset: caller.key.limitReset,
      holdNano: paid ? demand.wantNano : 0,
      ...(paid && demand.minNano < demand.wantNano ? { minHoldNano: demand.minNano } : {}),
      ...(caller.key.includeByokInLimit && caller.key.limitNano !== null ? { includeByok: true } : {}),
      ...(paid && keyDemand ? { keyHoldNano: keyDemand.wantNano } : {}),
      paid,
      ...(free ? { free: freeLimits(facts.settings) } : {}),
      abandoned,
    },
    facts.waitUntil,
  );
  if (!admitted.ok) {
    if (admitted.reason === "rate_limit") throw rateLimited(admitted, modelId, `${origin}/settings/credits`);
    throw paymentRequired(
      admitted.reason,
      caller.key,
      modelId,
      origin,
      admitted.availableNano > 0 ? (admitted.reason === "key_limit" && keyDemand ? keyDemand : demand).shortfall(admitted.availableNano) : null,
      // Held money counts only when the balance itself is not spent (it would be positive without the holds).
      admitted.heldNano !== undefined && admitted.availableNano + admitted.heldNano > 0 ? admitted.heldNano : 0,
    );
  }
  const { ticket } = admitted;
  // No free slot left: only the priced endpoints; no money: only the free ones.
  const endpoints = admitted.route === undefined ? planned : planned.filter((e) => isFree(e) === (admitted.route === "free_only"));
  if (admitted.route === "free_only" || ticket.holdNano >= demand.wantNano) return { ticket, endpoints, caps: new Map(), unaffordable: [] };
  // Less than the worst case could be paid: each priced endpoint within it, its completion cap lowered where needed.
  const fitted = demand.fit(ticket.holdNano);
  return { ...fitted, ticket, endpoints: fitted.endpoints.filter((e) => endpoints.includes(e)) };
}
