import { isFree } from "../catalog/catalog";
import type { Demand, Fitted } from "../request/hold";
import { failedOutcome } from "../request/outcome";
import { accountLedger } from "../ledger/isolate-ledgers";
import { freeLimits } from "../ledger/free-limits";
import type { Plan } from "./plan";
import type { RequestContext } from "./request-context";
import { abandonedRecord } from "./settle";
import { paymentRequired } from "./payment-required";
import { rateLimited } from "./rate-limited";

/**
 * The ledger's admission: a priced endpoint makes the request paid (key budget and balance must pay at
 * least its least hold; it holds its worst case, or what can be paid with its completion cap lowered to
 * fit); a free one makes it count against the free-model rate limits — in one ledger call. With both,
 * the ledger says which may serve it. Refused: 402 (with what could be afforded) or 429, nothing held.
 * Returns the endpoints the request may be served by, and the completion caps the router set.
 */
export async function admit(rc: RequestContext, demand: Demand, plan: Plan, origin: string): Promise<Fitted> {
  const paid = plan.endpoints.some((e) => !isFree(e));
  const free = plan.endpoints.some(isFree);
  const { caller } = rc;
  const admitted = await accountLedger(rc.env, caller.accountId).admit(
    {
      genId: rc.genId,
      keyHash: caller.key.hash,
      limitNano: caller.key.limitNano,
      limitReset: caller.key.limitReset,
      holdNano: paid ? demand.wantNano : 0,
      ...(paid && demand.minNano < demand.wantNano ? { minHoldNano: demand.minNano } : {}),
      paid,
      ...(free ? { free: freeLimits(rc.env) } : {}),
      abandoned: () => abandonedRecord(rc, failedOutcome(500, "The request ended without settling (the Worker was stopped); nothing was charged.")),
    },
    rc.waitUntil,
  );
  if (!admitted.ok) {
    const modelId = plan.candidates[0]!.modelId;
    if (admitted.reason === "rate_limit") throw rateLimited(admitted, modelId, `${origin}/settings/credits`);
    throw paymentRequired(
      admitted.reason,
      caller.key,
      modelId,
      origin,
      admitted.availableNano > 0 ? demand.shortfall(admitted.availableNano) : null,
      // Held money counts only when the balance itself is not spent (it would be positive without the holds).
      admitted.heldNano !== undefined && admitted.availableNano + admitted.heldNano > 0 ? admitted.heldNano : 0,
    );
  }
  rc.ticket = admitted.ticket;
  // No free slot left: only the priced endpoints; no money: only the free ones.
  const endpoints = admitted.route === undefined ? plan.endpoints : plan.endpoints.filter((e) => isFree(e) === (admitted.route === "free_only"));
  if (admitted.route === "free_only" || admitted.ticket.holdNano >= demand.wantNano) return { endpoints, caps: new Map(), unaffordable: [] };
  // Less than the worst case could be paid: each priced endpoint within it, its completion cap lowered where needed.
  const fitted = demand.fit(admitted.ticket.holdNano);
  return { ...fitted, endpoints: fitted.endpoints.filter((e) => endpoints.includes(e)) };
}
