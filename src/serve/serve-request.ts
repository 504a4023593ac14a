import type { Context } from "hono";
import type { AppEnv } from "../keys/caller";
import { billAndFeeBound, completionDemand, feeBound } from "../request/hold";
import { completionCap } from "../request/billed-fields";
import { measurePromptMedia } from "../request/prompt-media";
import { servedOutcome, type Outcome } from "../request/outcome";
import type { CallerProtocol } from "../protocols/inbound";
import type { InboundApi } from "../generations/record";
import { carrierProtocol } from "../protocols/outbound";
import { hashedUser } from "../routing/user-hash";
import { UnusableAnswer } from "../carriers/dispatch";
import { carrierBodies, type CarrierCall } from "../carriers/carrier-call";
import { byokHoldFee, byokMayServeFee } from "../carriers/carrier-keys";
import type { PricedEndpoint } from "../catalog/catalog";
import { accountAnswer, readAnswer } from "../relay/answer";
import { relayStream } from "../relay/stream-relay";
import { relayLimits } from "../relay/relay-limits";
import type { RequestFacts } from "./request-facts";
import type { RequestTrail } from "./settle";
import type { Stages } from "./stages";
import { serveApi, type Answered } from "./serve-api";
import { admitFor, dispatchFor, planFor } from "./common-stages";
import { readChat } from "./chat-read";
import { cappedEndpoint, unaffordable } from "./not-tried";
import { answerFacts, type ChatStages } from "./answer-metadata";
import { notCacheable } from "../answer-cache/not-cacheable";
import {
  askOf,
  CACHE_OFF,
  cacheHeaders,
  lookUpAnswer,
  storable,
  storeAnswer,
  StreamKeeper,
  unlessServed,
  type CacheState,
  type EntryFacts,
} from "./answer-cache-stage";
import { answerFromCache } from "./cached-answer";

/**
 * A completion request in the caller's protocol, top to bottom: auth (the route's middleware) → open →
 * read → plan (catalog, routing) → admit (ledger) → dispatch (carriers) → answer or relay → settle once
 * (src/serve/serve-api.ts). Each stage returns what it decided; what settle needs is kept in `stages`.
 */
export function serveRequest(c: Context<AppEnv>, protocol: CallerProtocol<InboundApi>): Promise<Response> {
  return serveApi(c, protocol.api, protocol.errorBody, (facts, trail, stages) => complete(facts, trail, stages, protocol, c.req.raw));
}

async function complete(facts: RequestFacts, trail: RequestTrail, stages: Stages, protocol: CallerProtocol, req: Request): Promise<Answered> {
  const read = await readChat(facts, protocol, req);
  stages.read = read;
  const planned = await planFor(facts, read.query);
  stages.names = planned.names;
  if ("refused" in planned) throw planned.refused;
  const { plan } = planned;
  const { body } = read;
  // The answer cache, when asked (docs/caching.md): a hit is answered here, before anything is held.
  const ask = askOf(facts);
  const cache =
    ask === null
      ? CACHE_OFF
      : await lookUpAnswer(facts, ask, {
          kind: "chat",
          body,
          stream: read.stream,
          refused: () => notCacheable(body),
          candidates: plan.candidates,
          endpoints: plan.endpoints,
          candidateOf: plan.candidateOf,
        });
  if (cache.status === "hit") {
    const cached = await answerFromCache(
      facts,
      trail,
      stages,
      { read, names: planned.names, plan, notTried: [], cache },
      protocol,
      cache,
      answerHeaders(facts, read),
    );
    if (cached) return cached;
  }
  const account = facts.carriers.account;
  const media = await measurePromptMedia(body);
  const demand = completionDemand(body, read.bytes, plan.endpoints, media, (b) => feeBound(b, byokHoldFee(account, b.endpoint)));
  // A key whose limit counts BYOK usage reserves there the carrier's whole bill and the fee, where the account's key may serve.
  const { key } = facts.caller;
  const keyDemand =
    key.includeByokInLimit && key.limitNano !== null && plan.endpoints.some((e) => byokMayServeFee(account, e) !== undefined)
      ? completionDemand(body, read.bytes, plan.endpoints, media, (b) => billAndFeeBound(b, byokMayServeFee(account, b.endpoint)))
      : undefined;
  const admission = await admitFor(facts, trail, stages, demand, plan.endpoints, plan.candidates[0]!.modelId, keyDemand);
  stages.admission = admission;
  const notTried = [...plan.capped.map((x) => cappedEndpoint(x, read.query.capField, completionCap(body) ?? 0)), ...admission.unaffordable.map(unaffordable)];
  const missed = unlessServed(cache);
  const chat: ChatStages = { read, names: planned.names, plan, admission, notTried, cache: missed };
  return read.stream ? serveStream(facts, trail, stages, chat, protocol) : serveAnswer(facts, trail, stages, chat, protocol);
}

async function serveAnswer(facts: RequestFacts, trail: RequestTrail, stages: Stages, chat: ChatStages, protocol: CallerProtocol): Promise<Answered> {
  const { body } = chat.read;
  const { served, value } = await carrierFor(facts, trail, stages, chat, false, (call, e) => readAnswer(call, carrierProtocol(e), body));
  const account = accountAnswer(body, served.endpoint, value, Date.now());
  const json = await protocol.answer(
    value,
    { tokens: account.tokens, charged: account.charged, endpoint: served.endpoint },
    answerFacts(facts, trail, chat, served),
  );
  const response = new Response(JSON.stringify(json), { headers: { "content-type": "application/json", ...answerHeaders(facts, chat.read, chat.cache) } });
  const outcome = servedOutcome(account);
  if (storable(outcome, served.adjustedMaxTokens)) storeAnswer(facts, chat.cache, entryFacts(served, outcome), { answer: value });
  return { response, outcome };
}

async function serveStream(facts: RequestFacts, trail: RequestTrail, stages: Stages, chat: ChatStages, protocol: CallerProtocol): Promise<Answered> {
  const { body } = chat.read;
  const { served, call } = await carrierFor(facts, trail, stages, chat, true, async (call, e) => {
    if (!call.response.body || !carrierProtocol(e).isEventStream(call.response.headers.get("content-type") ?? ""))
      throw new UnusableAnswer("the carrier did not answer with an event stream");
  });
  const { endpoint } = served;
  const renderer = protocol.stream(answerFacts(facts, trail, chat, served), endpoint);
  const keeper = chat.cache.status === "miss" ? new StreamKeeper(facts.settings.ANSWER_CACHE_MAX_ENTRY_BYTES) : null;
  const { readable, outcome } = relayStream(
    call,
    {
      body,
      endpoint,
      renderer,
      decoder: carrierProtocol(endpoint).streamDecoder(body),
      limits: relayLimits(facts.settings),
      idleMs: facts.settings.CARRIER_TIMEOUT_MS,
      startedAt: facts.startedAt,
      ...(keeper ? { tap: keeper.tap } : {}),
    },
    facts.signal,
  );
  // A stream that ended whole is stored once its outcome is known (off the response path).
  const kept = keeper
    ? outcome.then((o) => {
        if (!keeper.overflow && storable(o, served.adjustedMaxTokens)) storeAnswer(facts, chat.cache, entryFacts(served, o), { events: keeper.events });
        return o;
      })
    : outcome;
  // The renderer's async step (sealing), if it has one, runs on the relayed bytes on their way out.
  const response = new Response(renderer.asyncStep ? readable.pipeThrough(renderer.asyncStep) : readable, {
    headers: { "content-type": protocol.streamContentType, "cache-control": "no-cache", ...answerHeaders(facts, chat.read, chat.cache) },
  });
  return { response, outcome: kept };
}

/**
 * The headers of a served answer: its generation, the tools left out (`x-switchyard-dropped-tools`) and the
 * fields the router does not know (`x-switchyard-unknown-parameters`), if any; the answer cache's, when asked.
 */
function answerHeaders(facts: RequestFacts, read: ChatStages["read"], cache: CacheState = CACHE_OFF): Record<string, string> {
  return {
    ...cacheHeaders(cache),
    "x-generation-id": facts.genId,
    ...(read.droppedTools.length ? { "x-switchyard-dropped-tools": read.droppedTools.join(", ") } : {}),
    ...(read.unknownFields.length ? { "x-switchyard-unknown-parameters": read.unknownFields.join(", ") } : {}),
  };
}

/**
 * The admitted endpoints in order until one answers usably (`accept`), each asked with the completion cap
 * the router set on it, if any, and the caller's `user` hashed once per request (WebCrypto is async), before any attempt is built.
 * What served is kept in `stages` for settle.
 */
async function carrierFor<T>(
  facts: RequestFacts,
  trail: RequestTrail,
  stages: Stages,
  { read: { body }, names, plan, admission, notTried }: ChatStages,
  stream: boolean,
  accept: (call: CarrierCall, endpoint: PricedEndpoint) => Promise<T>,
) {
  const userHash = body.user === undefined ? null : await hashedUser(facts.caller.accountId, body.user);
  // What the caller asked for, as dispatch's errors name it.
  const label = plan.candidates.length > 1 ? plan.candidates.map((x) => x.answerAs).join(", ") : names.model;
  const dispatched = await dispatchFor(facts, trail, plan.candidateOf, admission, {
    bodyFor: carrierBodies(body, stream, userHash, admission.caps),
    stream,
    accept,
    label,
    skipped: notTried,
  });
  stages.served = dispatched.served;
  return dispatched;
}

/** What a stored answer's entry names of how it was served. */
function entryFacts(served: { endpoint: PricedEndpoint; model: string }, o: Outcome): EntryFacts {
  return { model: served.model, endpoint: served.endpoint, finishReason: o.finishReason, upstreamId: o.upstreamId };
}
