import type { Env } from "../env";
import type { SettleRequest } from "./ledger-object";
import { ledgerFor } from "./ledger";
import { logError } from "../log-error";

/**
 * Stores settles (and lease releases) in the account's ledger, coalesced per isolate. The first settle
 * of an account opens a batch and, a moment later (its own timer), sends it in one RPC under its own
 * waitUntil; settles arriving meanwhile join it and end at once, and one that fills it sends it
 * instead. Joiners do not wait for that RPC: workerd ties I/O to the request that made it; a request
 * waiting on another's is cancelled as hung, and one that keeps a timer of its own to avoid that makes
 * workerd fail internally under load ("cross-thread PromiseFulfiller was destroyed"; tried). The
 * sender's waitUntil keeps the isolate alive until the batch is stored, so a joined settle is as
 * durable as one sent by its own request.
 */

/** How long a batch gathers: each batch costs one RPC and one storage commit in the ledger, by far its largest cost. */
const COALESCE_MS = 20;
/** Sent at once when this full; also keeps one RPC's transaction short. */
const MAX_BATCH = 64;
const ATTEMPTS = 4;

type Batch = { items: SettleRequest[]; releases: string[] };
const open = new Map<string, Batch>(); // accountId → the batch still gathering

export function storeSettle(env: Env, accountId: string, item: SettleRequest): Promise<void> {
  return join(env, accountId, (b) => b.items.push(item));
}

/** Returns a retired lease's unspent remainder to the balance. */
export function releaseLease(env: Env, accountId: string, leaseId: string): Promise<void> {
  return join(env, accountId, (b) => b.releases.push(leaseId));
}

async function join(env: Env, accountId: string, add: (b: Batch) => void): Promise<void> {
  const gathering = open.get(accountId);
  const batch = gathering ?? { items: [], releases: [] };
  add(batch);
  const full = batch.items.length + batch.releases.length >= MAX_BATCH;
  if (gathering && !full) return; // the request that opened it sends it
  if (!gathering && !full) {
    open.set(accountId, batch);
    await new Promise((r) => setTimeout(r, COALESCE_MS));
    if (open.get(accountId) !== batch) return; // filled and sent by another request
  }
  open.delete(accountId);
  try {
    await withRetries(() => ledgerFor(env, accountId).settleBatch(batch.items, batch.releases));
  } catch (err) {
    // Lost only if the ledger stays unreachable through every retry: the holds then expire (README).
    logError("ledger unreachable: settles not stored", err, { settles: batch.items.length, releases: batch.releases.length });
    throw err;
  }
}

/** Retries a batch: settles are idempotent per generation id, so a repeat after a lost reply is harmless. */
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
