import type { Env } from "../env";
import type { SettleRequest } from "./ledger-object";
import { ledgerFor } from "./ledger";

/**
 * Stores settles in the account's ledger. Each request sends its own (under its own waitUntil): workerd
 * ties I/O and timers to the request that made them, so one request cannot safely wait on a batch that
 * another request's I/O carries. Leases a retired slice released ride along with the next settle.
 */
const ATTEMPTS = 4;
const releases = new Map<string, string[]>(); // accountId → lease ids to release with the next settle

export function storeSettle(env: Env, accountId: string, item: SettleRequest): Promise<void> {
  const released = takeReleases(accountId);
  return withRetries(() => ledgerFor(env, accountId).settleBatch([item], released)).then(() => undefined);
}

/** Returns a retired lease's unspent remainder to the balance. */
export function releaseLease(env: Env, accountId: string, leaseId: string): Promise<void> {
  const list = releases.get(accountId) ?? [];
  list.push(leaseId);
  releases.set(accountId, list);
  return withRetries(() => ledgerFor(env, accountId).settleBatch([], takeReleases(accountId))).then(() => undefined);
}

function takeReleases(accountId: string): string[] {
  const list = releases.get(accountId) ?? [];
  releases.delete(accountId);
  return list;
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
