import type { Context } from "hono";
import type { AppEnv } from "../keys/caller";
import type { PricedEndpoint } from "../catalog/catalog";
import { costNano, nanoToUsd } from "../catalog/money";
import { ApiError, Untranslatable } from "../request/errors";
import { isPresetModel } from "../presets/preset-config";
import { readModelRequest } from "../request/json-body";
import { estimateInputTokens, inputTokensBound, parseEmbeddingsRequest, type EmbeddingsRequest } from "../request/embeddings-request";
import { BYTES_PER_TOKEN, utf8Bytes } from "../request/token-estimate";
import { fixedDemand } from "../request/hold";
import { plainUsage } from "../request/usage";
import { servedOutcome } from "../request/outcome";
import { carrierProtocol } from "../protocols/outbound";
import { OWN_PATH_APIS } from "../protocols/inbound";
import { hashedUser } from "../routing/user-hash";
import { routeHeaders, type RouteQuery } from "../routing/route-query";
import { UnusableAnswer } from "../carriers/dispatch";
import type { CarrierCall } from "../carriers/carrier-call";
import { readCarrierJson } from "../relay/answer";
import type { RequestFacts } from "./request-facts";
import type { RequestTrail } from "./settle";
import type { Read, Stages } from "./stages";
import { serveApi, type Answered } from "./serve-api";
import { admitFor, dispatchFor, planFor } from "./common-stages";
import { askOf, CACHE_OFF, cacheHeaders, hitOutcome, lookUpAnswer, storeAnswer, unlessServed } from "./answer-cache-stage";

/** Errors are OpenAI's shape, as on /chat/completions. */
const errorBody = OWN_PATH_APIS.embeddings.errorBody;

/** Nothing an embeddings request carries is fitted to an endpoint when routing: each input's length is checked on its own, after. */
const NO_NEED = { parts: { image: 0, file: 0, audio: 0, video: 0 }, promptTokens: 0, completionTokens: 0, features: [], outputs: [] };

/**
 * An embeddings request, through the stages a completion goes through (src/serve/serve-api.ts): auth (the
 * route's middleware) → open → read → plan (the model's carriers with its preferences and health) → admit
 * (a hold of the most the inputs can cost: a token is at least a byte) → dispatch (its protocol's
 * embeddings endpoint, next carrier on failure) → answer → settle once (the carrier's input tokens, else
 * our estimate, at the input price). Recorded as a generation with `inbound_api: embeddings`.
 */
export function serveEmbeddings(c: Context<AppEnv>): Promise<Response> {
  return serveApi(c, "embeddings", errorBody, (facts, trail, stages) => embed(facts, trail, stages, c.req.raw));
}

async function embed(facts: RequestFacts, trail: RequestTrail, stages: Stages, raw: Request): Promise<Answered> {
  const { req, read } = await readEmbeddings(facts, raw);
  stages.read = read;
  const planned = await planFor(facts, read.query);
  stages.names = planned.names;
  if ("refused" in planned) throw planned.refused;
  const { plan, names } = planned;
  // `dimensions` and `input_type` go to carriers that take them (a carrier refusing them is a 400 naming its reason).
  const longest = Math.max(...req.inputs.map((i) => (typeof i === "string" ? Math.ceil(utf8Bytes(i) / BYTES_PER_TOKEN) : i.length)));
  const endpoints = plan.endpoints.filter((e) => e.context_length >= longest);
  if (endpoints.length === 0)
    throw new ApiError(400, `An input is about ${longest} tokens, more than model ${names.model} takes (${plan.endpoints[0]!.context_length}): split it.`);
  // The answer cache, when asked (docs/caching.md): a hit is answered here, before anything is held.
  const ask = askOf(facts);
  const query = {
    kind: "embeddings" as const,
    body: req,
    stream: false,
    refused: () => null,
    candidates: plan.candidates,
    endpoints,
    candidateOf: plan.candidateOf,
  };
  const cache = ask === null ? CACHE_OFF : await lookUpAnswer(facts, ask, query);
  if (cache.status === "hit" && "vectors" in cache.entry) {
    stages.cacheHit = { sourceId: cache.entry.sourceId, model: cache.model };
    const body = embeddingsBody(facts, req, cache.entry.vectors, cache.model, cache.endpoint, 0, 0);
    return {
      response: new Response(JSON.stringify(body), { headers: { "content-type": "application/json", "x-generation-id": facts.genId, ...cacheHeaders(cache) } }),
      outcome: hitOutcome(cache),
    };
  }
  const missed = unlessServed(cache);
  const inputTokens = inputTokensBound(req);
  const hold = inputTokens * Math.max(...endpoints.map((e) => e.inputNano));
  const admission = await admitFor(facts, trail, stages, fixedDemand(hold, inputTokens, endpoints), endpoints, plan.candidates[0]!.modelId);
  stages.admission = admission;
  const userHash = req.user === undefined ? null : await hashedUser(facts.caller.accountId, req.user);
  const maxBytes = facts.settings.EMBEDDINGS_MAX_ANSWER_BYTES;
  const { served, value } = await dispatchFor(facts, trail, plan.candidateOf, admission, {
    bodyFor: (e) => {
      const adapter = carrierProtocol(e).embeddings;
      if (!adapter) throw new Untranslatable(`carrier ${e.providerEntry.name} has no embeddings endpoint`);
      return { body: adapter.body(req, e, userHash), headers: null, url: (base) => adapter.url(base, e) };
    },
    stream: false,
    accept: (call, e) => embeddingsAnswer(call, e, req, maxBytes),
    label: names.model,
  });
  stages.served = served;
  const tokens = plainUsage(value.promptTokens ?? estimateInputTokens(req), 0, 0);
  const cost = costNano(tokens, served.endpoint);
  const body = embeddingsBody(facts, req, value.vectors, served.model, served.endpoint, tokens.promptTokens, cost);
  storeAnswer(facts, missed, { model: served.model, endpoint: served.endpoint, finishReason: null, upstreamId: null }, { vectors: value.vectors });
  return {
    response: new Response(JSON.stringify(body), { headers: { "content-type": "application/json", "x-generation-id": facts.genId, ...cacheHeaders(missed) } }),
    outcome: servedOutcome({
      provider: served.endpoint.providerEntry.name,
      status: 200,
      tokens,
      charged: { costNano: cost, insured: false, cacheDiscountNano: 0 },
      usageSource: value.promptTokens === null ? "estimate" : "carrier",
      finishReason: null,
      firstTokenAt: Date.now(),
      upstreamId: null,
    }),
  };
}

/** The caller's answer: the vectors in the encoding asked, the model as named, the carrier, the usage and its cost. */
function embeddingsBody(
  facts: RequestFacts,
  req: EmbeddingsRequest,
  vectors: number[][],
  model: string,
  endpoint: PricedEndpoint,
  tokens: number,
  cost: number,
) {
  return {
    id: facts.genId,
    object: "list",
    data: vectors.map((v, index) => ({ object: "embedding", index, embedding: req.encoding_format === "base64" ? base64Floats(v) : v })),
    model,
    provider: endpoint.providerEntry.name,
    usage: { prompt_tokens: tokens, total_tokens: tokens, cost: nanoToUsd(cost) },
  };
}

/** The embeddings request as read, and the route query it makes: its model and preferences, nothing to fit (each input is checked after). */
async function readEmbeddings(facts: RequestFacts, raw: Request): Promise<{ req: EmbeddingsRequest; read: Read }> {
  let json: Awaited<ReturnType<typeof readModelRequest>>["json"];
  try {
    json = (await readModelRequest(raw)).json;
  } catch (err) {
    throw err instanceof ApiError ? err : new ApiError(400, "The request body could not be read.");
  }
  const req = parseEmbeddingsRequest(json);
  // A preset's parameters and system prompt mean nothing to an embedding: refused rather than half applied.
  if (isPresetModel(req.model))
    throw new ApiError(400, `Presets apply to completions (chat, messages, responses), not embeddings: name the embeddings model instead of \`${req.model}\`.`);
  const query: RouteQuery = {
    model: req.model,
    models: undefined,
    provider: req.provider,
    ...routeHeaders(undefined, facts.headers),
    output: "embeddings",
    need: () => NO_NEED,
    parameters: [],
    capField: "max_tokens",
  };
  return { req, read: { stream: false, externalUser: req.user ?? null, query } };
}

/** A carrier's embeddings answer (bounded in bytes, within the call's timeout) as vectors; unusable → the next carrier. */
async function embeddingsAnswer(call: CarrierCall, endpoint: PricedEndpoint, req: EmbeddingsRequest, maxBytes: number) {
  const json = await readCarrierJson(call, maxBytes, `EMBEDDINGS_MAX_ANSWER_BYTES (${maxBytes} bytes)`);
  const read = carrierProtocol(endpoint).embeddings!.answer(json, req.inputs.length);
  if ("unusable" in read) throw new UnusableAnswer(read.unusable);
  return read;
}

/** A vector as OpenAI's base64 encoding: little-endian float32s. */
function base64Floats(v: number[]): string {
  const bytes = new Uint8Array(new Float32Array(v).buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
