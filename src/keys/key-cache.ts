import type { ApiKey } from "../db/schema";
import type { GuardrailRules } from "../guardrails/rules";
import { isolate } from "../isolate";

/** A key as authentication reads it: its row and the rules of the guardrails it carries (docs/teams.md), cached together. */
export type AuthKey = { key: ApiKey; guardrails: GuardrailRules[] };

/**
 * Keys recently read from D1, per isolate, so most requests authenticate without a query.
 * Staleness: a key disabled, deleted or changed in another isolate — or a guardrail of it changed,
 * assigned or unassigned — is still honoured here for at most KEY_CACHE_TTL_MS; changes made through this
 * isolate apply at once (`forgetKey`). Unknown keys are
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
