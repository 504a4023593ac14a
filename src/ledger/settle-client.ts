import type { Env } from "../env";
import type { SettleRequest } from "./ledger-object";
import { ledgerFor } from "./ledger";

/**
 * Stores settles (and lease releases) in the account's ledger, coalesced per isolate. Each waits a
 * moment on its own timer for others of the same account to join its batch; the first whose timer
 * fires, or who fills the batch, sends the whole batch in one RPC under its own waitUntil. The others
 * end without waiting for that RPC: workerd ties I/O to the request that made it, and a request that
 * waits on another's is cancelled as hung. The sender's waitUntil keeps the isolate alive until the
 * batch is stored, so a batch is as durable as a settle per request.
 */
const COALESCE_MS = 2;
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
  let batch = open.get(accountId);
  if (!batch) open.set(accountId, (batch = { items: [], releases: [] }));
  add(batch);
  if (batch.items.length + batch.releases.length < MAX_BATCH) await new Promise((r) => setTimeout(r, COALESCE_MS));
  if (open.get(accountId) !== batch) return; // another request sent it, under its own waitUntil
  open.delete(accountId);
  const sent = batch;
  try {
    await withRetries(() => ledgerFor(env, accountId).settleBatch(sent.items, sent.releases));
  } catch (err) {
    // Lost only if the ledger stays unreachable through every retry: the holds then expire (README).
    console.error(`ledger unreachable: ${sent.items.length} settles and ${sent.releases.length} releases not stored`, err instanceof Error ? err.message : "unknown");
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
