import type { Outcome } from "../request/outcome";
import type { CarrierAttempt } from "../db/carrier-attempt";
import { generationRecord, type RecordFacts } from "../generations/record";
import { accountLedger } from "../ledger/isolate-ledgers";
import { isFree } from "../catalog/catalog";
import { AttemptLog } from "../carriers/attempt-log";
import type { RequestFacts } from "./request-facts";
import type { Stages } from "./stages";

/** A request settled a second time: a bug on the request path, never money debited twice. */
export class SettledTwice extends Error {
  constructor(genId: string) {
    super(`generation ${genId} was settled twice`);
  }
}

/**
 * What a request accumulates as it runs, and nothing else: its carrier attempts, and its one settle.
 * Made as it opens, with a promise held under waitUntil from the start and resolved once it is settled,
 * so a caller leaving cannot cut settling short.
 */
export class RequestTrail {
  /** Every carrier attempt, for the record's provider_responses and endpoint health. */
  readonly attempts: AttemptLog;
  private settled = false;
  private markSettled = () => {};

  constructor(waitUntil: (p: Promise<unknown>) => void, onAttempt: (a: CarrierAttempt) => void) {
    this.attempts = new AttemptLog(onAttempt);
    waitUntil(new Promise<void>((resolve) => (this.markSettled = resolve)));
  }

  /** Takes the request's one settle; a second throws. Returns what marks it settled. */
  settleOnce(genId: string): () => void {
    if (this.settled) throw new SettledTwice(genId);
    this.settled = true;
    return this.markSettled;
  }
}

/**
 * Debits the outcome's cost and stores its record, built from the request's facts and what its stages
 * returned, in the account's ledger — once per request: the request path settles in one place
 * (src/serve/serve-api.ts), and a second call throws before it reaches the ledger. Batched with the
 * isolate's other settles of the account, retried, queued when the ledger stays unreachable (idempotent
 * on the generation id there too). Runs off the response path, under waitUntil.
 */
export function settle(facts: RequestFacts, trail: RequestTrail, stages: Stages, outcome: Outcome): Promise<void> {
  const markSettled = trail.settleOnce(facts.genId);
  const endedAt = Date.now();
  const attempts = trail.attempts.final({
    status: outcome.status,
    firstTokenAt: outcome.firstTokenAt,
    completionTokens: outcome.completionTokens,
    endedAt,
    streamed: stages.read?.stream ?? false,
  });
  const record = generationRecord(recordFacts(facts, stages), outcome, endedAt, attempts);
  trail.attempts.settled(attempts);
  const { accountId, key } = facts.caller;
  const served = stages.served?.endpoint;
  const p = accountLedger(facts.env, accountId)
    .settle(
      stages.admission?.ticket ?? null,
      {
        genId: facts.genId,
        keyHash: key.hash,
        costNano: outcome.costNano,
        record,
        servedPriced: served !== undefined && !isFree(served),
        // Budget alerts are percents of the key's limit, in its window: the ledger learns it with each settle.
        ...(key.limitNano !== null
          ? { keyLimit: { nano: key.limitNano, reset: key.limitReset ?? null, ...(key.includeByokInLimit ? { includeByok: true as const } : {}) } }
          : {}),
        ...(outcome.byokUpstreamNano !== null ? { byok: true as const } : {}),
      },
      facts.waitUntil,
    )
    .catch(() => {}) // logged where the batch failed
    .finally(markSettled);
  facts.waitUntil(p);
  return p;
}

/** The record an admitted request leaves should it die without settling (the ledger writes it when its hold expires). */
export function abandonedRecord(facts: RequestFacts, trail: RequestTrail, stages: Stages, outcome: Outcome) {
  return generationRecord(recordFacts(facts, stages), outcome, facts.startedAt, trail.attempts.final(null));
}

/** What the record says of the request beyond its outcome: its facts, and what its stages decided so far. */
function recordFacts(facts: RequestFacts, { read, names, served, cacheHit }: Stages): RecordFacts {
  return {
    genId: facts.genId,
    caller: facts.caller,
    app: facts.app,
    startedAt: facts.startedAt,
    httpReferer: facts.httpReferer,
    userAgent: facts.userAgent,
    inboundApi: facts.inboundApi,
    stream: read?.stream ?? false,
    externalUser: read?.externalUser ?? null,
    model: served?.model ?? cacheHit?.model ?? names?.model ?? "",
    sessionId: names?.sessionId ?? null,
    strategy: names?.strategy ?? null,
    adjustedMaxTokens: served?.adjustedMaxTokens ?? null,
    preset: read?.preset ?? null,
    cacheSourceId: cacheHit?.sourceId ?? null,
  };
}
