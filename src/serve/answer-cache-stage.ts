import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "../request/chat-request";
import type { Outcome } from "../request/outcome";
import { cacheAsk, type CacheAsk } from "../answer-cache/opt-in";
import { cacheKey } from "../answer-cache/cache-key";
import { retentionRefused } from "../answer-cache/not-cacheable";
import { ZERO_USAGE, zeroedEvents, type CacheEntry, type Kept } from "../answer-cache/cache-entry";
import { readEntry, writeEntry, type CacheStorage } from "../answer-cache/cache-store";
import { logError } from "../log-error";
import type { RequestFacts } from "./request-facts";

/**
 * The answer cache's stage (docs/caching.md), after routing and before the ledger: what the request's ask
 * of the cache came to. `off`: it did not ask. `bypass`: it asked, but its answer is never cached (the
 * reason is in its answer's headers). `miss`: nothing fresh is stored under its key — a carrier serves, and
 * a whole answer is stored after. `hit`: the stored answer, on an endpoint the plan still has.
 */
export type CacheState =
  | { status: "off" }
  | { status: "bypass"; reason: string }
  | { status: "miss"; key: string; ttlS: number }
  | { status: "hit"; key: string; ttlS: number; entry: CacheEntry; endpoint: PricedEndpoint; model: string };

/** What the cache is looked up by: the request's kind, body and stream mode, and the plan it was routed to. */
export type CacheQuery = {
  kind: "chat" | "embeddings";
  body: ChatRequest | Record<string, unknown>;
  stream: boolean;
  /** Why this request is never cached, or null (asked only when the request asks for the cache). */
  refused: () => string | null;
  candidates: ReadonlyArray<{ modelId: string }>;
  endpoints: PricedEndpoint[];
  candidateOf: ReadonlyMap<PricedEndpoint, { answerAs: string }>;
};

/** A request that does not ask for the cache: nothing looked up, nothing stored, no header. */
export const CACHE_OFF: CacheState = { status: "off" };

function storage(facts: RequestFacts): CacheStorage {
  return { kv: facts.env.CATALOG, d1: facts.env.DB };
}

/** The request's ask of the cache, by its headers or its key's setting (a bad header is a 400 in its protocol); null when it does not ask. */
export function askOf(facts: RequestFacts): CacheAsk {
  const limits = { defaultTtlS: facts.settings.ANSWER_CACHE_DEFAULT_TTL_S, maxTtlS: facts.settings.ANSWER_CACHE_MAX_TTL_S };
  return cacheAsk(facts.headers, limits, facts.caller.key.answerCacheTtlS ?? null);
}

/** The stage, for a request that asks: why it is never cached, else the account's entry under its key. */
export async function lookUpAnswer(facts: RequestFacts, ask: NonNullable<CacheAsk>, q: CacheQuery): Promise<CacheState> {
  const models = q.candidates.map((x) => x.modelId);
  const refused = q.refused() ?? retentionRefused(facts.caller.guardrails, models);
  if (refused !== null) return { status: "bypass", reason: refused };
  const key = await cacheKey({ accountId: facts.caller.accountId, kind: q.kind, stream: q.stream, models, body: q.body });
  let entry: CacheEntry | null = null;
  try {
    entry = await readEntry(storage(facts), facts.caller.accountId, key, Date.now());
  } catch (err) {
    logError("answer cache read failed", err, { generation: facts.genId }); // a cache that fails is a miss, never a failed request
  }
  // The endpoint that served it must still be routed to (the catalog or health may have dropped it).
  const endpoint = entry && q.endpoints.find((e) => e.modelId === entry.modelId && e.provider === entry.provider);
  if (!entry || !endpoint) return { status: "miss", key, ttlS: ask.ttlS };
  return { status: "hit", key, ttlS: ask.ttlS, entry, endpoint, model: q.candidateOf.get(endpoint)?.answerAs ?? entry.model };
}

/**
 * The state a request goes on with to a carrier: a hit it could not be answered from (its entry not of this
 * API's shape, or not replayable) is a miss, so the carrier's answer replaces the entry.
 */
export function unlessServed(state: CacheState): Exclude<CacheState, { status: "hit" }> {
  return state.status === "hit" ? { status: "miss", key: state.key, ttlS: state.ttlS } : state;
}

/**
 * The answer's cache headers, OpenRouter's (docs/caching.md): `X-OpenRouter-Cache-Status` HIT, MISS or
 * BYPASS (with `X-Switchyard-Cache-Reason`), the TTL (for a hit: the seconds it has left) and a hit's age.
 */
export function cacheHeaders(state: CacheState, now = Date.now()): Record<string, string> {
  switch (state.status) {
    case "off":
      return {};
    case "bypass":
      return { "x-openrouter-cache-status": "BYPASS", "x-switchyard-cache-reason": state.reason };
    case "miss":
      return { "x-openrouter-cache-status": "MISS", "x-openrouter-cache-ttl": String(state.ttlS) };
    case "hit":
      return {
        "x-openrouter-cache-status": "HIT",
        "x-openrouter-cache-ttl": String(Math.max(0, Math.ceil((state.entry.expiresAt - now) / 1000))),
        "x-openrouter-cache-age": String(Math.max(0, Math.floor((now - state.entry.createdAt) / 1000))),
        "x-switchyard-cache-source": state.entry.sourceId,
      };
  }
}

/** Whether an answer is whole enough to serve again: a 200 that finished (not in an error), nothing insured or cut, no cap the router lowered. */
export function storable(o: Outcome, adjustedMaxTokens: number | null): boolean {
  return (
    o.status === 200 &&
    !o.insured &&
    !o.cancelled &&
    o.errorMessage === null &&
    o.finishReason !== null &&
    o.finishReason !== "error" &&
    adjustedMaxTokens === null
  );
}

/** What an entry records of the answer it keeps, besides the answer itself. */
export type EntryFacts = { model: string; endpoint: PricedEndpoint; finishReason: string | null; upstreamId: string | null };

/**
 * Stores a whole answer under the miss's key, off the response path (waitUntil): never delaying the answer,
 * and a failure is logged, never the request's. An answer larger than ANSWER_CACHE_MAX_ENTRY_BYTES is not stored.
 */
export function storeAnswer(facts: RequestFacts, state: CacheState, f: EntryFacts, kept: Kept): void {
  if (state.status !== "miss") return;
  const now = Date.now();
  const body = "answer" in kept ? { answer: { ...kept.answer, usage: ZERO_USAGE } } : "events" in kept ? { events: zeroedEvents(kept.events) } : kept;
  const entry: CacheEntry = {
    v: 1,
    sourceId: facts.genId,
    model: f.model,
    modelId: f.endpoint.modelId,
    provider: f.endpoint.provider,
    finishReason: f.finishReason,
    upstreamId: f.upstreamId,
    createdAt: now,
    expiresAt: now + state.ttlS * 1000,
    ...body,
  };
  const s = facts.settings;
  const size = new TextEncoder().encode(JSON.stringify(entry)).byteLength;
  if (size > s.ANSWER_CACHE_MAX_ENTRY_BYTES) return;
  const bounds = { maxBytes: s.ANSWER_CACHE_ACCOUNT_MAX_BYTES, maxEntries: s.ANSWER_CACHE_ACCOUNT_MAX_ENTRIES };
  facts.waitUntil(
    writeEntry(storage(facts), facts.caller.accountId, state.key, entry, bounds).catch((err) =>
      logError("answer cache store failed", err, { generation: facts.genId }),
    ),
  );
}

/** A stream's canonical chunks kept as they pass (StreamSetup.tap), up to the largest entry; past it nothing more is kept, and nothing is stored. */
export class StreamKeeper {
  readonly events: string[] = [];
  private bytes = 0;
  overflow = false;
  constructor(private readonly maxBytes: number) {}
  readonly tap = (data: string): void => {
    if (this.overflow) return;
    this.bytes += data.length;
    if (this.bytes > this.maxBytes) {
      this.overflow = true;
      this.events.length = 0;
    } else this.events.push(data);
  };
}

/** What a hit settles: served, at cost 0, with no tokens billed (usage_source null: none was); the stored answer's finish and carrier id. */
export function hitOutcome({ entry, endpoint }: { entry: CacheEntry; endpoint: PricedEndpoint }): Outcome {
  return {
    provider: endpoint.providerEntry.name,
    status: 200,
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cacheDiscountNano: 0,
    costNano: 0,
    byokUpstreamNano: null, // no carrier was called: nothing to charge a fee on
    finishReason: entry.finishReason,
    errorMessage: null,
    firstTokenAt: Date.now(),
    upstreamId: entry.upstreamId,
    cancelled: false,
    usageSource: null,
    insured: false,
  };
}
