import { settings, type SettingsSource } from "../settings";

/**
 * The ledger's timings, shared by the account's Durable Object and the isolates that talk to it.
 * Each can be set by a Worker var (docs/configuration.md); the defaults are the documented ones.
 */
export type LedgerTimings = {
  /** A slice whose isolate stopped renewing it for this long is expired: the isolate died. */
  leaseTtlMs: number;
  /** A request hold (or a released slice still waiting for settles) not renewed for this long is expired. */
  holdTtlMs: number;
  /** How often a running request's slice or hold is renewed: a quarter of the lease TTL, so three renewals may fail. */
  renewEveryMs: number;
  /** How long an isolate keeps retrying a settle batch before it hands it to the settle queue (inside waitUntil's 30 s). */
  settleRetryBudgetMs: number;
  /** A settle batch (per account and isolate) is sent this long after the settle that opened it. */
  settleWindowMs: number;
  /** One settle RPC not answered within this long is given up and retried (idempotent): a hung call cannot hold a batch. */
  settleAttemptTimeoutMs: number;
  /** How soon after a settle the ledger sends its outbox of records to the records queue (at least); `/generation` reads the outbox meanwhile. */
  flushDelayMs: number;
  /** The longest the flush delay grows to for an account whose flushes are smaller than `flushTargetRecords`. */
  flushMaxDelayMs: number;
  /** Records a flush aims at: the delay scales by this ÷ the records the last flush sent. */
  flushTargetRecords: number;
  /** Records one alarm sends; more go by the next alarm, at once. */
  flushMaxRecords: number;
  /** A record batch sent and not acknowledged by the records store within this long is sent again. */
  recordsAckTimeoutMs: number;
  /** Past this size of its database the ledger drops the records of stored debits (they ride in debits, kept 7 days). */
  recordsKeepBytes: number;
  /** Not a timing but the ledger's too: BYOK requests a UTC month whose fee is waived (BYOK_FREE_REQUESTS_PER_MONTH, docs/byok.md). */
  byokFreeRequestsPerMonth: number;
};

/** The ledger's timings from the settings (src/settings.ts); the hold TTL is never shorter than the lease TTL. */
export function ledgerTimings(env: SettingsSource): LedgerTimings {
  const s = settings(env);
  const leaseTtlMs = s.LEDGER_LEASE_TTL_MS;
  return {
    leaseTtlMs,
    holdTtlMs: Math.max(leaseTtlMs, s.LEDGER_HOLD_TTL_MS),
    renewEveryMs: leaseTtlMs / 4,
    settleRetryBudgetMs: s.SETTLE_RETRY_BUDGET_MS,
    settleWindowMs: s.SETTLE_WINDOW_MS,
    settleAttemptTimeoutMs: s.SETTLE_ATTEMPT_TIMEOUT_MS,
    flushDelayMs: s.RECORDS_FLUSH_DELAY_MS,
    flushMaxDelayMs: Math.max(s.RECORDS_FLUSH_DELAY_MS, s.RECORDS_FLUSH_MAX_DELAY_MS),
    flushTargetRecords: s.RECORDS_FLUSH_TARGET_RECORDS,
    flushMaxRecords: s.RECORDS_FLUSH_BATCH,
    recordsAckTimeoutMs: s.RECORDS_ACK_TIMEOUT_MS,
    recordsKeepBytes: s.LEDGER_RECORDS_KEEP_BYTES,
    byokFreeRequestsPerMonth: s.BYOK_FREE_REQUESTS_PER_MONTH,
  };
}
