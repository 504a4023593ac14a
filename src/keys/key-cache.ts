import type { ApiKey } from "../db/schema";
import type { GuardrailRules } from "../guardrails/rules";
import type { ByokEntry } from "../byok/byok-store";
import { isolate } from "../isolate";

/**
 * A key as authentication reads it: its row, the rules of the guardrails it carries (docs/teams.md) and
 * its account's own carrier keys, still encrypted (docs/byok.md), cached together.
 */
export type AuthKey = { key: ApiKey; guardrails: GuardrailRules[]; byok: ByokEntry[] };

/**
 * Keys recently read from D1, per isolate, so most requests authenticate without a query.
 * Staleness: a key disabled, deleted or changed in another isolate — or a guardrail of it changed,
 * assigned or unassigned (to the key or its member), or a carrier key of its account added, changed or removed — is still honoured here for at most KEY_CACHE_TTL_MS; changes made through this
 * isolate apply at once (`forgetKey`, `forgetMembersKeys`). Unknown keys are
 * never cached, so a new key works immediately.
 */
export const KEY_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

const keyCache = isolate.slot("key cache", () => new Map<string, { key: AuthKey; until: number }>());

export async function cachedKey(hash: string, load: (hash: string) => Promise<AuthKey | undefined>): Promise<AuthKey | undefined> {
  const cache = keyCache.get();
  const now = Date.now();
  const hit = cache.get(hash);
  if (hit && hit.until > now) return hit.key;
  const key = await load(hash);
  if (key) {
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!); // oldest first
    cache.set(hash, { key, until: now + KEY_CACHE_TTL_MS });
  } else cache.delete(hash);
  return key;
}

export function forgetKey(hash: string): void {
  keyCache.get().delete(hash);
}

/** Forgets every cached key of the account: its carrier keys changed (docs/byok.md), and every key carries them. */
export function forgetAccountKeys(accountId: string): void {
  const cache = keyCache.get();
  for (const [hash, hit] of cache) if (hit.key.key.accountId === accountId) cache.delete(hash);
}

/** Forgets every cached key of these members: a guardrail was assigned to them or taken off them (docs/teams.md). */
export function forgetMembersKeys(memberIds: readonly string[]): void {
  const ids = new Set(memberIds);
  const cache = keyCache.get();
  for (const [hash, hit] of cache) if (hit.key.key.memberId !== null && ids.has(hit.key.key.memberId)) cache.delete(hash);
}
