import type { PricedEndpoint } from "../catalog/catalog";
import { isFree } from "../catalog/catalog";
import type { ChatRequest } from "../request/chat-request";
import { holdNano } from "../request/hold";
import { failedOutcome } from "../request/outcome";
import { accountLedger } from "../ledger/isolate-ledgers";
import { freeLimits } from "../ledger/free-limits";
import type { Plan } from "./plan";
import type { RequestContext } from "./request-context";
import { abandonedRecord } from "./settle";
import { paymentRequired } from "./payment-required";
import { rateLimited } from "./rate-limited";

/**
 * The ledger's admission: a priced endpoint makes the request paid (balance, key budget, a hold of the
 * most it may cost); a free one makes it count against the free-model rate limits — in one ledger call.
 * With both, the ledger says which may serve it. Refused: 402 or 429, nothing held. Returns the
 * endpoints the request may be served by.
 */
export async function admit(
  rc: RequestContext,
  body: ChatRequest,
  bytes: number,
  plan: Plan,
  origin: string,
  hold = holdNano(body, bytes, plan.endpoints),
): Promise<PricedEndpoint[]> {
  const paid = plan.endpoints.some((e) => !isFree(e));
  const free = plan.endpoints.some(isFree);
  const { caller } = rc;
  const admitted = await accountLedger(rc.env, caller.accountId).admit(
    {
      genId: rc.genId,
      keyHash: caller.key.hash,
      limitNano: caller.key.limitNano,
      limitReset: caller.key.limitReset,
      holdNano: paid ? hold : 0,
      paid,
      ...(free ? { free: freeLimits(rc.env) } : {}),
      abandoned: () => abandonedRecord(rc, failedOutcome(500, "The request ended without settling (the Worker was stopped); nothing was charged.")),
    },
    rc.waitUntil,
  );
  if (!admitted.ok) {
    const modelId = plan.candidates[0]!.modelId;
    if (admitted.reason === "rate_limit") throw rateLimited(admitted, modelId, `${origin}/settings/credits`);
    throw paymentRequired(admitted.reason, caller.key, modelId, origin);
  }
  rc.ticket = admitted.ticket;
  // No free slot left: only the priced endpoints; no money: only the free ones.
  return admitted.route === undefined ? plan.endpoints : plan.endpoints.filter((e) => isFree(e) === (admitted.route === "free_only"));
}
