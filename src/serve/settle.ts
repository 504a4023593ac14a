import type { RequestContext } from "./request-context";
import type { NewGeneration } from "../db/schema";
import { accountLedger } from "../ledger/isolate-ledgers";
import type { CarrierAttempt } from "../db/carrier-attempt";
import { isFree } from "../catalog/catalog";

/** How one request ended: what is debited and recorded. */
export type Outcome = {
  provider: string | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  costNano: number;
  finishReason: string | null;
  errorMessage: string | null;
  /** When the first token reached the caller (ms epoch), null when none did. */
  firstTokenAt: number | null;
  upstreamId: string | null;
  cancelled: boolean;
  /** Where the token counts come from: the carrier's usage, our estimate, or null when nothing was served. */
  usageSource: "carrier" | "estimate" | null;
  /** Zero-completion insurance applied: tokens were served (and are recorded) but costNano is 0. */
  insured: boolean;
};

export function failedOutcome(status: number, message: string, provider: string | null = null): Outcome {
  return {
    provider,
    status,
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    costNano: 0,
    finishReason: null,
    errorMessage: message,
    firstTokenAt: null,
    upstreamId: null,
    cancelled: false,
    usageSource: null,
    insured: false,
  };
}

/** The request's carrier attempts, the served one completed by how the request ended. */
function finalAttempts(rc: RequestContext, o: Outcome, endedAt: number): CarrierAttempt[] {
  return rc.attempts.final({ status: o.status, firstTokenAt: o.firstTokenAt, completionTokens: o.completionTokens, endedAt, streamed: rc.stream });
}

export function generationRecord(rc: RequestContext, o: Outcome, endedAt: number, attempts = finalAttempts(rc, o, endedAt)): NewGeneration {
  return {
    id: rc.genId,
    accountId: rc.caller.accountId,
    keyHash: rc.caller.key.hash,
    model: rc.model,
    providerName: o.provider,
    app: rc.app,
    streamed: rc.stream,
    createdAt: rc.startedAt,
    latencyMs: o.firstTokenAt === null ? null : o.firstTokenAt - rc.startedAt,
    generationTimeMs: endedAt - rc.startedAt,
    tokensPrompt: o.promptTokens,
    tokensCompletion: o.completionTokens,
    tokensReasoning: o.reasoningTokens,
    costNano: o.costNano,
    finishReason: o.finishReason,
    status: o.status,
    errorMessage: o.errorMessage,
    upstreamId: o.upstreamId,
    cancelled: o.cancelled,
    httpReferer: rc.httpReferer,
    userAgent: rc.userAgent,
    externalUser: rc.externalUser,
    sessionId: rc.sessionId,
    usageSource: o.usageSource,
    insured: o.insured,
    providerResponses: attempts.length ? JSON.stringify(attempts) : null,
    strategy: rc.strategy,
  };
}

/**
 * Debits the outcome's cost and stores its record in the account's ledger, exactly once (idempotent on
 * the generation id, batched with the isolate's other settles of the account, retried, queued when the
 * ledger stays unreachable). Runs off the response path, under waitUntil.
 */
export function settle(rc: RequestContext, outcome: Outcome): Promise<void> {
  const endedAt = Date.now();
  const attempts = finalAttempts(rc, outcome, endedAt);
  const record = generationRecord(rc, outcome, endedAt, attempts);
  rc.attempts.settled(attempts);
  const { accountId, key } = rc.caller;
  const p = accountLedger(rc.env, accountId)
    .settle(rc.ticket, { genId: rc.genId, keyHash: key.hash, costNano: outcome.costNano, record, servedPriced: rc.served !== null && !isFree(rc.served) }, rc.waitUntil)
    .catch(() => {}) // logged where the batch failed
    .finally(rc.markSettled);
  rc.waitUntil(p);
  return p;
}
