import type { CallerProtocol } from "../protocols/inbound";
import { plainUsage } from "../request/usage";
import { replayStream } from "../relay/replay";
import type { RequestFacts } from "./request-facts";
import type { RequestTrail } from "./settle";
import type { Stages } from "./stages";
import type { Answered } from "./serve-api";
import { answerFacts, type ChatStages } from "./answer-metadata";
import { cacheHeaders, hitOutcome, type CacheState } from "./answer-cache-stage";

type Hit = Extract<CacheState, { status: "hit" }>;

/**
 * A chat-family request answered from the answer cache (docs/caching.md): the stored canonical answer,
 * or its stored chunks replayed, rendered by the caller's protocol as a carrier's would be — with usage of
 * zero tokens and a cost of 0 — and recorded as served from the generation that stored it. No carrier is
 * called and the ledger holds nothing: the request settles at cost 0 with its record. Null when the stored
 * stream cannot be replayed (then the carrier serves, as on a miss).
 */
export async function answerFromCache(
  facts: RequestFacts,
  trail: RequestTrail,
  stages: Stages,
  chat: Omit<ChatStages, "admission">,
  protocol: CallerProtocol,
  hit: Hit,
  headers: Record<string, string>,
): Promise<Answered | null> {
  const { entry, endpoint } = hit;
  const served = { endpoint, model: hit.model, adjustedMaxTokens: null };
  const answer = answerFacts(facts, trail, chat, served);
  const all = { ...headers, ...cacheHeaders(hit) };
  if ("events" in entry) {
    const renderer = protocol.stream(answer, endpoint);
    const replayed = replayStream(entry.events, renderer, endpoint);
    if (replayed === null) return null;
    stages.cacheHit = { sourceId: entry.sourceId, model: hit.model };
    const readable = new Blob([replayed.bytes]).stream();
    const response = new Response(renderer.asyncStep ? readable.pipeThrough(renderer.asyncStep) : readable, {
      headers: { "content-type": protocol.streamContentType, "cache-control": "no-cache", ...all },
    });
    return { response, outcome: hitOutcome(hit) };
  }
  if (!("answer" in entry)) return null;
  const free = { tokens: plainUsage(0, 0, 0), charged: { costNano: 0, insured: false, cacheDiscountNano: 0 }, endpoint };
  const json = await protocol.answer(entry.answer, free, answer);
  stages.cacheHit = { sourceId: entry.sourceId, model: hit.model };
  return { response: new Response(JSON.stringify(json), { headers: { "content-type": "application/json", ...all } }), outcome: hitOutcome(hit) };
}
