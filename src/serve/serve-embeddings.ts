import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { PricedEndpoint } from "../catalog/catalog";
import { loadCatalog } from "../catalog/load";
import { costNano, nanoToUsd } from "../catalog/money";
import { ApiError, Untranslatable } from "../request/errors";
import { readModelRequest } from "../request/json-body";
import { parseChatRequest } from "../request/chat-request";
import { estimateInputTokens, inputTokensBound, parseEmbeddingsRequest, type EmbeddingsRequest } from "../request/embeddings-request";
import { BYTES_PER_TOKEN, utf8Bytes } from "../request/token-estimate";
import { fixedDemand } from "../request/hold";
import { plainUsage } from "../request/usage";
import { servedOutcome, type Outcome } from "../request/outcome";
import { carrierProtocol } from "../protocols/outbound";
import { OWN_PATH_APIS } from "../protocols/inbound";
import { hashedUser } from "../routing/user-hash";
import { dispatch, UnusableAnswer } from "../carriers/dispatch";
import type { CarrierCall } from "../carriers/carrier-call";
import { readCarrierJson } from "../relay/answer";
import { settings } from "../settings";
import type { RequestContext } from "./request-context";
import { planRequest } from "./plan";
import { admit } from "./admit";
import { settle } from "./settle";
import { failure, openRequest, refuseManagementKey } from "./serve-request";

/** Errors are OpenAI's shape, as on /chat/completions. */
const errorBody = OWN_PATH_APIS.embeddings.errorBody;

/**
 * An embeddings request, top to bottom as a completion is: auth (the route's middleware) → body →
 * catalog → routing (the model's carriers with its preferences and health) → ledger (a hold of the
 * most the inputs can cost: a token is at least a byte) → carrier (its protocol's embeddings endpoint,
 * next carrier on failure) → settle once (the carrier's input tokens, else our estimate, at the input
 * price). Recorded as a generation with `inbound_api: embeddings`; `x-generation-id` on every answer.
 */
export async function serveEmbeddings(c: Context<AppEnv>): Promise<Response> {
  const rc = openRequest(c, "embeddings");
  let answered: { response: Response; outcome: Outcome };
  try {
    answered = await embed(rc, c);
  } catch (err) {
    answered = failure(rc, c, errorBody, err);
  }
  void settle(rc, answered.outcome);
  return answered.response;
}

async function embed(rc: RequestContext, c: Context<AppEnv>): Promise<{ response: Response; outcome: Outcome }> {
  refuseManagementKey(rc);
  let read: Awaited<ReturnType<typeof readModelRequest>>;
  try {
    read = await readModelRequest(c.req.raw);
  } catch (err) {
    throw err instanceof ApiError ? err : new ApiError(400, "The request body could not be read.");
  }
  const req = parseEmbeddingsRequest(read.json);
  rc.externalUser = req.user ?? null;
  const catalog = await loadCatalog(rc.env, rc.waitUntil);
  // Routing reads a chat-shaped view: the model and the preferences (the inputs' fit is checked below, each on its own).
  const view = parseChatRequest({ model: req.model, ...(req.provider ? { provider: req.provider } : {}), messages: [{ role: "user", content: "" }] });
  const plan = await planRequest(rc, view, catalog, c.req.raw.headers, { output: "embeddings" });
  // `dimensions` and `input_type` go to carriers that take them (a carrier refusing them is a 400 naming its reason).
  const longest = Math.max(...req.inputs.map((i) => (typeof i === "string" ? Math.ceil(utf8Bytes(i) / BYTES_PER_TOKEN) : i.length)));
  const endpoints = plan.endpoints.filter((e) => e.context_length >= longest);
  if (endpoints.length === 0)
    throw new ApiError(400, `An input is about ${longest} tokens, more than model ${rc.model} takes (${plan.endpoints[0]!.context_length}): split it.`);
  const inputTokens = inputTokensBound(req);
  const hold = inputTokens * Math.max(...endpoints.map((e) => e.inputNano));
  const admitted = (await admit(rc, fixedDemand(hold, inputTokens, endpoints), { ...plan, endpoints }, new URL(c.req.url).origin)).endpoints;
  const userHash = req.user === undefined ? null : await hashedUser(rc.caller.accountId, req.user);
  const maxBytes = settings(rc.env).EMBEDDINGS_MAX_ANSWER_BYTES;
  const served = await dispatch(
    rc.env,
    rc.model,
    admitted,
    (e) => {
      const adapter = carrierProtocol(e).embeddings;
      if (!adapter) throw new Untranslatable(`carrier ${e.providerEntry.name} has no embeddings endpoint`);
      return { body: adapter.body(req, e, userHash), headers: null, url: (base) => adapter.url(base, e) };
    },
    false,
    (call, e) => readEmbeddings(call, e, req, maxBytes),
    rc.attempts,
    c.req.raw.signal,
  );
  rc.served = served.endpoint;
  rc.model = plan.candidateOf.get(served.endpoint)!.answerAs;
  const tokens = plainUsage(served.value.promptTokens ?? estimateInputTokens(req), 0, 0);
  const cost = costNano(tokens, served.endpoint);
  const body = {
    id: rc.genId,
    object: "list",
    data: served.value.vectors.map((v, index) => ({ object: "embedding", index, embedding: req.encoding_format === "base64" ? base64Floats(v) : v })),
    model: rc.model,
    provider: served.endpoint.providerEntry.name,
    usage: { prompt_tokens: tokens.promptTokens, total_tokens: tokens.promptTokens, cost: nanoToUsd(cost) },
  };
  return {
    response: new Response(JSON.stringify(body), { headers: { "content-type": "application/json", "x-generation-id": rc.genId } }),
    outcome: servedOutcome({
      provider: served.endpoint.providerEntry.name,
      status: 200,
      tokens,
      charged: { costNano: cost, insured: false, cacheDiscountNano: 0 },
      usageSource: served.value.promptTokens === null ? "estimate" : "carrier",
      finishReason: null,
      firstTokenAt: Date.now(),
      upstreamId: null,
    }),
  };
}

/** A carrier's embeddings answer (bounded in bytes, within the call's timeout) as vectors; unusable → the next carrier. */
async function readEmbeddings(call: CarrierCall, endpoint: PricedEndpoint, req: EmbeddingsRequest, maxBytes: number) {
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
