import { mulberry32 } from "./mulberry32";
import type { Settings } from "../settings";

/**
 * The random source of one request's load balancing. With ROUTING_SEED set, a seeded generator
 * (mulberry32) started afresh for every request, so every request draws the same order: tests and
 * reproductions. Otherwise, with a session (`session_id`, else the `x-session-id`, Claude Code's `x-claude-code-session-id` or Codex's `session-id` header), seeded by the
 * account and session: every request of the session draws the same order, so it stays with one carrier
 * (its prompt cache) while the carriers and their health stay as they are. Otherwise Math.random.
 */
export function routingRandom({ ROUTING_SEED: seed }: Pick<Settings, "ROUTING_SEED">, session?: { accountId: string; id: string }): () => number {
  if (seed !== null) return mulberry32(seed);
  if (session) return mulberry32(fnv1a(`${session.accountId}\n${session.id}`));
  return Math.random;
}

/** FNV-1a, 32 bits: a synchronous, stable hash (WebCrypto's digests are async, and no secrecy is needed here). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Whether the default order balances load by price (ROUTING_BALANCE "price", the default) or is strictly cheapest first ("off"). */
export function balancing(s: Pick<Settings, "ROUTING_BALANCE">): boolean {
  return s.ROUTING_BALANCE;
}
