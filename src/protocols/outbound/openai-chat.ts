import type { CarrierProtocol } from "./carrier-protocol";
import { carrierView } from "../../request/router-fields";
import type { ChatRequest } from "../../request/chat-request";
import { reasoningAsk, type Effort } from "../../request/reasoning";
import { openAiEmbeddings } from "./embeddings/openai-embeddings";

/**
 * The OpenAI Chat Completions protocol (`POST {base}/chat/completions`, a Bearer key), which most carriers
 * speak. The canonical request and answer are its own shapes, so the request goes as the caller sent it
 * (less the router's fields, `user` hashed, usage asked for on streams) and the answer comes back as is.
 */
export const openAiChat: CarrierProtocol = {
  name: "openai-chat",
  basePath: "/v1",
  defaultAuth: "bearer",

  bodies(body, stream, userHash) {
    const { model: _requested, ...rest } = carrierView(body, userHash);
    if (stream) {
      const options = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
      rest.stream_options = { ...options, include_usage: true };
    }
    // "{…}"; a chat request always has messages, so never "{}". Each variant serialized once, when first needed.
    let plain: string | undefined;
    let reasoningModel: string | undefined;
    return (endpoint) => {
      const fields = endpoint.reasoning_model_rules ? (reasoningModel ??= JSON.stringify(reasoningModelFields(rest))) : (plain ??= JSON.stringify(rest));
      return `{"model":${JSON.stringify(endpoint.upstream_model)},${fields.slice(1)}`;
    };
  },

  requestHeaders() {
    return null;
  },

  leftOut() {
    return []; // every field goes as sent
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
