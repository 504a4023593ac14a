import type { Env } from "../env";
import { ledgerFor } from "./ledger";
import { releaseLease } from "./settle-client";
import { randomId } from "../keys/api-key";

/**
 * Per-isolate slices of account balances. The account's ledger leases an isolate a slice of the
 * available balance; requests are then admitted against it locally (no round trip), holding their
 * worst-case cost in the slice, and their settles return the unspent part. A slice is used for a short
 * while, then retired and its remainder released. Only for paid models and keys without a limit (a
 * key's limit is checked by the ledger itself on every request).
 */
const SLICE_USE_MS = 2_000;
/** A slice nobody uses for this long is released (from the last request's waitUntil), so idle isolates lock no money. */
const IDLE_RELEASE_MS = 1_000;
/** A lease asks for this many of the asking request's holds. */
const SLICE_HOLDS = 64;

type Slice = {
  leaseId: string;
  accountId: string;
  remainingNano: number;
  inflight: number;
  retireAt: number;
  retired: boolean;
  /** When the last request in flight settled. */
  idleSince: number;
  /** Whether an idle check is armed. */
  idleCheck: boolean;
};

const current = new Map<string, Slice>(); // accountId → the slice admitting now
const byLease = new Map<string, Slice>(); // leaseId → slice, until released

export type SliceAdmission = { ok: true; leaseId: string } | { ok: false; reason: "balance" } | { ok: false; reason: "no_slice" };

const leasing = new Set<string>(); // accounts with a lease request under way in this isolate

/**
 * Admits from the account's slice, leasing a new one when it has no room. While one request leases,
 * the others answer "no_slice" (the caller then asks the ledger for this request alone): waiting on
 * another request's lease would tie this request to that request's I/O, which workerd does not allow,
 * and leasing in parallel would split the balance into many half-used slices.
 */
export async function admitFromSlice(env: Env, accountId: string, holdNano: number, waitUntil: (p: Promise<unknown>) => void): Promise<SliceAdmission> {
  const slice = usable(env, accountId, waitUntil);
  if (slice && slice.remainingNano >= holdNano) return take(slice, holdNano);
  if (leasing.has(accountId)) return { ok: false, reason: "no_slice" };
  leasing.add(accountId);
  try {
    const fresh = await lease(env, accountId, holdNano, SLICE_HOLDS * holdNano, waitUntil);
    return fresh === "balance" ? { ok: false, reason: "balance" } : take(fresh, holdNano);
  } finally {
    leasing.delete(accountId);
  }
}

function take(slice: Slice, holdNano: number): SliceAdmission {
  slice.remainingNano -= holdNano;
  slice.inflight++;
  slice.idleSince = 0;
  return { ok: true, leaseId: slice.leaseId };
}

/** A leased request settled: its hold returns to the slice less what it cost. Local bookkeeping only. */
export function settleInSlice(env: Env, leaseId: string, holdNano: number, costNano: number, waitUntil: (p: Promise<unknown>) => void): void {
  const slice = byLease.get(leaseId);
  if (!slice) return;
  slice.inflight--;
  slice.remainingNano += holdNano - costNano;
  if (slice.inflight > 0) return;
  if (slice.retired) return release(env, slice, waitUntil);
  slice.idleSince = Date.now();
  if (!slice.idleCheck) watchIdle(env, slice, IDLE_RELEASE_MS, waitUntil);
}

/**
 * One idle check per slice, not one per request: it re-arms itself while the slice keeps being used.
 * The chain ends when the slice is released, at most SLICE_USE_MS after it was leased.
 */
function watchIdle(env: Env, slice: Slice, ms: number, waitUntil: (p: Promise<unknown>) => void): void {
  slice.idleCheck = true;
  waitUntil(
    new Promise((resolve) => setTimeout(resolve, ms)).then(() => {
      slice.idleCheck = false;
      if (slice.inflight > 0 || !byLease.has(slice.leaseId)) return; // busy (its last settle re-arms) or released
      const idle = Date.now() - slice.idleSince;
      if (idle >= IDLE_RELEASE_MS) retire(env, slice, waitUntil);
      else watchIdle(env, slice, IDLE_RELEASE_MS - idle, waitUntil);
    }),
  );
}

function usable(env: Env, accountId: string, waitUntil: (p: Promise<unknown>) => void): Slice | undefined {
  const slice = current.get(accountId);
  if (slice && Date.now() >= slice.retireAt) {
    retire(env, slice, waitUntil);
    return undefined;
  }
  return slice;
}

async function lease(env: Env, accountId: string, holdNano: number, wantNano: number, waitUntil: (p: Promise<unknown>) => void): Promise<Slice | "balance"> {
  const leaseId = randomId("lease-", 12);
  const granted = await ledgerFor(env, accountId).lease({ leaseId, holdNano, wantNano });
  if (!granted.ok) return "balance";
  const slice: Slice = { leaseId, accountId, remainingNano: granted.grantNano, inflight: 0, retireAt: Date.now() + SLICE_USE_MS, retired: false, idleSince: 0, idleCheck: false };
  byLease.set(leaseId, slice);
  const previous = current.get(accountId);
  current.set(accountId, slice);
  if (previous) retire(env, previous, waitUntil);
  return slice;
}

function retire(env: Env, slice: Slice, waitUntil: (p: Promise<unknown>) => void): void {
  if (current.get(slice.accountId) === slice) current.delete(slice.accountId);
  slice.retired = true;
  if (slice.inflight === 0) release(env, slice, waitUntil);
}

function release(env: Env, slice: Slice, waitUntil: (p: Promise<unknown>) => void): void {
  if (!byLease.delete(slice.leaseId)) return;
  waitUntil(releaseLease(env, slice.accountId, slice.leaseId).catch(() => {})); // else it expires with the hold TTL
}
