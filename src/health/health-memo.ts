import type { Env } from "../env";
import { isolate } from "../isolate";
import { EMPTY_SNAPSHOT, HEALTH_KV_KEY, parseSnapshot, type HealthSnapshot } from "./health-snapshot";

/** After a failed KV read, how soon the isolate tries again (serving what it has meanwhile). */
const KV_RETRY_MS = 5_000;

type WaitUntil = (p: Promise<unknown>) => void;

/** The snapshot served now, and when KV was last asked (or a re-read was started). */
const healthMemo = isolate.slot<{ served?: { snapshot: HealthSnapshot; readAt: number } }>("health snapshot memo", () => ({}));

/**
 * The endpoint health snapshot, stale-while-revalidate. Only the first read in a fresh isolate waits,
 * for one KV read (the catalog is read from KV then too); from then on a request never waits on KV:
 * a snapshot older than HEALTH_MEMO_MS (30 s) is served as it is while one re-read runs under `waitUntil`. No snapshot
 * in KV, or KV failing, gives the empty snapshot (health unknown), never an error. Its callers pass
 * HEALTH_MEMO_MS (`memoMs`) from the settings they read where the request opened.
 */
export async function readHealth(env: Env, waitUntil: WaitUntil, memoMs: number): Promise<HealthSnapshot> {
  const now = Date.now();
  const memo = healthMemo.get().served;
  if (!memo) return reread(env, now, undefined, memoMs);
  if (now - memo.readAt >= memoMs) {
    memo.readAt = now; // claims the re-read: concurrent requests of this isolate do not start another
    waitUntil(reread(env, now, memo.snapshot, memoMs));
  }
  return memo.snapshot;
}

async function reread(env: Env, now: number, had: HealthSnapshot | undefined, memoMs: number): Promise<HealthSnapshot> {
  try {
    const raw = await env.CATALOG.get(HEALTH_KV_KEY);
    // Absent: nothing measured. Invalid: keep what we had.
    const snapshot = raw === null ? EMPTY_SNAPSHOT : (parseSnapshot(raw) ?? had ?? EMPTY_SNAPSHOT);
    return (healthMemo.get().served = { snapshot, readAt: now }).snapshot;
  } catch {
    return (healthMemo.get().served = { snapshot: had ?? EMPTY_SNAPSHOT, readAt: now - memoMs + KV_RETRY_MS }).snapshot;
  }
}

/** Tests use this to make the next read go to KV as in a fresh isolate. */
export function forgetHealthMemo(): void {
  healthMemo.reset();
}
