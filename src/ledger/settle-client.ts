import type { Env } from "../env";
import type { SettleRequest } from "./ledger-object";
import { ledgerFor } from "./ledger";

/**
 * Stores settles in the account's ledger. Each request sends its own (under its own waitUntil): workerd
 * ties I/O and timers to the request that made them, so one request cannot safely wait on a batch that
 * another request's I/O carries.
 */
const ATTEMPTS = 4;

export function storeSettle(env: Env, accountId: string, item: SettleRequest): Promise<void> {
  return withRetries(() => ledgerFor(env, accountId).settleBatch([item], [])).then(() => undefined);
}

/** Returns a retired lease's unspent remainder to the balance. */
export function releaseLease(env: Env, accountId: string, leaseId: string): Promise<void> {
  return withRetries(() => ledgerFor(env, accountId).settleBatch([], [leaseId])).then(() => undefined);
}

/** Retries a settle: idempotent per generation id, so a repeat after a lost reply is harmless. */
async function withRetries<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    }
  }
}
