import type { Env } from "../env";
import { positiveIntVar } from "../config";

/**
 * The ledger's timings, shared by the account's Durable Object and the isolates that talk to it.
 * Each can be set by a Worker var (README: Configuration); the defaults are the documented ones.
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
};

export const DEFAULT_LEASE_TTL_MS = 2 * 60_000;
export const DEFAULT_HOLD_TTL_MS = 30 * 60_000;
export const DEFAULT_SETTLE_RETRY_BUDGET_MS = 25_000;
export const DEFAULT_SETTLE_WINDOW_MS = 20;
export const DEFAULT_SETTLE_ATTEMPT_TIMEOUT_MS = 5_000;

export function ledgerTimings(env: Pick<Env, "LEDGER_LEASE_TTL_MS" | "LEDGER_HOLD_TTL_MS" | "SETTLE_RETRY_BUDGET_MS" | "SETTLE_WINDOW_MS" | "SETTLE_ATTEMPT_TIMEOUT_MS">): LedgerTimings {
  const leaseTtlMs = positiveIntVar(env.LEDGER_LEASE_TTL_MS, DEFAULT_LEASE_TTL_MS);
  return {
    leaseTtlMs,
    holdTtlMs: Math.max(leaseTtlMs, positiveIntVar(env.LEDGER_HOLD_TTL_MS, DEFAULT_HOLD_TTL_MS)),
    renewEveryMs: leaseTtlMs / 4,
    settleRetryBudgetMs: positiveIntVar(env.SETTLE_RETRY_BUDGET_MS, DEFAULT_SETTLE_RETRY_BUDGET_MS),
    settleWindowMs: positiveIntVar(env.SETTLE_WINDOW_MS, DEFAULT_SETTLE_WINDOW_MS),
    settleAttemptTimeoutMs: positiveIntVar(env.SETTLE_ATTEMPT_TIMEOUT_MS, DEFAULT_SETTLE_ATTEMPT_TIMEOUT_MS),
  };
}
