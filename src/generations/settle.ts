import type { RequestContext } from "./request-context";
import type { NewGeneration } from "../db/schema";
import { ledgerFor } from "../ledger/ledger";

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
  };
}

export function generationRecord(rc: RequestContext, o: Outcome, endedAt: number): NewGeneration {
  return {
    id: rc.genId,
    accountId: rc.caller.accountId,
    keyHash: rc.caller.key.hash,
    model: rc.requestedModel,
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
  };
}

const SETTLE_ATTEMPTS = 4;

/**
 * Debits the outcome's cost and stores its record in the account's ledger, in one idempotent call
 * (retried on transient failure: the generation id makes a repeat harmless). Runs off the response
 * path under waitUntil; the ledger copies the record to D1 in batches.
 */
export function settle(rc: RequestContext, outcome: Outcome): Promise<void> {
  const record = generationRecord(rc, outcome, Date.now());
  const run = async () => {
    const ledger = ledgerFor(rc.env, rc.caller.accountId);
    for (let attempt = 1; ; attempt++) {
      try {
        await ledger.settle({ genId: rc.genId, keyHash: rc.caller.key.hash, costNano: outcome.costNano, record });
        return;
      } catch (err) {
        if (attempt >= SETTLE_ATTEMPTS) {
          // Lost only if the ledger stays unreachable; the hold then expires and the record is missing.
          console.error("settle failed", rc.genId, err instanceof Error ? err.message : "unknown");
          return;
        }
        await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      }
    }
  };
  const p = run().finally(rc.markSettled);
  rc.waitUntil(p);
  return p;
}
