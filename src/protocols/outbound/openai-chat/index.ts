import type { CarrierProtocol } from "../carrier-protocol";
import { carrierView } from "../../../request/router-fields";
import type { ChatRequest } from "../../../request/chat-request";
import { reasoningAsk, type Effort } from "../../../request/reasoning";
import { openAiEmbeddings } from "../openai-embeddings";
import { reasoningOffRefused, relaxesToolChoice, thinkingLeftOut } from "../thinking-rules";
import type { PricedEndpoint } from "../../../catalog/catalog";

/**
 * The OpenAI Chat Completions protocol (`POST {base}/chat/completions`, a Bearer key), which most carriers
 * speak. The canonical request and answer are its own shapes, so the request goes as the caller sent it
 * (less the router's fields, `user` hashed, usage asked for on streams) and the answer comes back as is.
 */
export const openAiChat: CarrierProtocol = {
  name: "openai-chat",
  caching: "implicit",
  basePath: "/v1",
  defaultAuth: "bearer",

  bodies(body, stream, userHash) {
    const { model: _requested, ...rest } = carrierView(body, userHash);
    if (stream) {
      const options = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
      rest.stream_options = { ...options, include_usage: true };
    }
    // "{…}"; a chat request always has messages, so never "{}". Each variant serialized once, when first needed.
    const variants = new Map<string, string>();
    return (endpoint) => {
      const off = reasoningOffRefused(body, endpoint);
      const relaxed = relaxesToolChoice(body, endpoint);
      const key = `${endpoint.reasoning_model_rules ? 1 : 0}${off ? 1 : 0}${relaxed ? 1 : 0}`;
      let fields = variants.get(key);
      if (fields === undefined) variants.set(key, (fields = JSON.stringify(endpointFields(rest, endpoint, off, relaxed))));
      return `{"model":${JSON.stringify(endpoint.upstream_model)},${fields.slice(1)}`;
    };
  },

  requestHeaders() {
    return null;
  },

  leftOut(body, endpoint) {
    return thinkingLeftOut(body, endpoint); // every other field goes as sent
  },

  url(base) {
    return `${base.replace(/\/$/, "")}/chat/completions`;
  },

  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },

  answer(json) {
    if (typeof json !== "object" || json === null || !Array.isArray((json as { choices?: unknown }).choices))
      return { unusable: "the carrier's answer is not a chat completion" };
    return { answer: json as { choices: unknown[] } };
  },

  isEventStream(contentType) {
    return contentType.includes("text/event-stream");
  },

  embeddings: openAiEmbeddings,
  tokenCount: null,

  streamDecoder() {
    return null; // OpenAI chat completion chunks are the canonical events
  },
};

/**
 * The fields for one endpoint: OpenAI's reasoning-model rules where it follows them; where the model
 * always thinks (`thinking_always_on`: GPT-6 Astra and 6.1 Sol have no effort `none`), reasoning turned off
 * goes at the lowest effort; a forced tool choice the endpoint refuses while thinking goes as `auto`.
 */
function endpointFields(rest: Record<string, unknown>, endpoint: PricedEndpoint, off: boolean, relaxed: boolean): Record<string, unknown> {
  let out = rest;
  if (off) {
    const { reasoning: _reasoning, reasoning_effort: _effort, include_reasoning: _include, ...on } = rest;
    out = { ...on, ...(endpoint.reasoning_model_rules ? { reasoning_effort: LOWEST_EFFORT } : { reasoning: { effort: LOWEST_EFFORT } }) };
  }
  if (endpoint.reasoning_model_rules) out = reasoningModelFields(out);
  if (relaxed) out = { ...out, tool_choice: "auto" };
  return out;
}

/** The least effort a model that always thinks takes (OpenAI's and OpenRouter's `low`). */
const LOWEST_EFFORT = "low";

/**
 * OpenAI's reasoning-model rules: the cap as `max_completion_tokens` (they refuse `max_tokens`), the
 * effort as `reasoning_effort` (OpenRouter's `reasoning` object and `include_reasoning` are not theirs).
 */
export function reasoningModelFields(fields: Record<string, unknown>): Record<string, unknown> {
  const { max_tokens, reasoning: _reasoning, include_reasoning: _include, ...out } = fields;
  if (out.max_completion_tokens == null && typeof max_tokens === "number") out.max_completion_tokens = max_tokens;
  const ask = reasoningAsk(fields as ChatRequest);
  if (out.reasoning_effort === undefined && ask !== null) {
    if (!ask.on) out.reasoning_effort = "minimal";
    else if (ask.effort !== null) out.reasoning_effort = OPENAI_EFFORTS[ask.effort];
  }
  return out;
}

/** OpenRouter's efforts as OpenAI's (which stop at high, and start at minimal). */
const OPENAI_EFFORTS: Record<NonNullable<Effort>, string> = {
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
  none: "minimal",
};
