import type { RequestContext } from "./request-context";
import type { Outcome } from "../request/outcome";
import { generationRecord } from "../generations/record";
import { accountLedger } from "../ledger/isolate-ledgers";
import { isFree } from "../catalog/catalog";

/** A request settled a second time: a bug on the request path, never money debited twice. */
export class SettledTwice extends Error {
  constructor(genId: string) {
    super(`generation ${genId} was settled twice`);
  }
}

/**
 * Debits the outcome's cost and stores its record in the account's ledger — once per request: the
 * request path settles in one place (src/serve/serve-request.ts), and a second call throws before it
 * reaches the ledger. Batched with the isolate's other settles of the account, retried, queued when the
 * ledger stays unreachable (idempotent on the generation id there too). Runs off the response path,
 * under waitUntil.
 */
export function settle(rc: RequestContext, outcome: Outcome): Promise<void> {
  if (rc.settled) throw new SettledTwice(rc.genId);
  rc.settled = true;
  const endedAt = Date.now();
  const attempts = rc.attempts.final({
    status: outcome.status,
    firstTokenAt: outcome.firstTokenAt,
    completionTokens: outcome.completionTokens,
    endedAt,
    streamed: rc.stream,
  });
  const record = generationRecord(rc, outcome, endedAt, attempts);
  rc.attempts.settled(attempts);
  const { accountId, key } = rc.caller;
  const p = accountLedger(rc.env, accountId)
    .settle(
      rc.ticket,
      { genId: rc.genId, keyHash: key.hash, costNano: outcome.costNano, record, servedPriced: rc.served !== null && !isFree(rc.served) },
      rc.waitUntil,
    )
    .catch(() => {}) // logged where the batch failed
    .finally(rc.markSettled);
  rc.waitUntil(p);
  return p;
}

/** The record an admitted request leaves should it die without settling (the ledger writes it when its hold expires). */
export function abandonedRecord(rc: RequestContext, outcome: Outcome) {
  return generationRecord(rc, outcome, rc.startedAt, rc.attempts.final(null));
}
