import type { CallerProtocol } from "../caller-protocol";
import { readModelRequest } from "../../../request/json-body";
import { parseChatRequest } from "../../../request/chat-request";
import { completionCapField } from "../../../request/billed-fields";
import { unknownFields } from "../../../request/unknown-fields";
import { presentUsage } from "./usage";
import { chunkRewriter } from "./chunk-rewriter";
import { openAiErrorBody } from "../openai-error";

/**
 * OpenAI's Chat Completions, as OpenRouter serves it (`POST /api/v1/chat/completions`): the canonical
 * request and answer are its own shapes, so reading is validation and rendering is our rewrites — the
 * generation id, the model as the caller named it, the carrier's name, `usage` with `cost`, and the
 * routing metadata when asked for.
 */
export const openAiChat: CallerProtocol<"chat"> = {
  name: "openai-chat",
  api: "chat",
  routes: [{ method: "POST", path: "/chat/completions", serves: "request" }],
  keyHeaders: "authorization",
  streamContentType: "text/event-stream; charset=utf-8",

  async read(req) {
    const { json, bytes } = await readModelRequest(req);
    return { body: parseChatRequest(json), bytes, unknown: unknownFields(json) };
  },

  capField: completionCapField,

  answer(upstream, billed, facts) {
    const metadata = facts.metadata();
    return {
      ...upstream,
      id: facts.genId,
      object: "chat.completion",
      created: typeof upstream.created === "number" ? upstream.created : facts.created,
      model: facts.model,
      provider: facts.provider,
      // The contract requires the field (null allowed): the carrier's when it gives one.
      system_fingerprint: typeof upstream.system_fingerprint === "string" ? upstream.system_fingerprint : null,
      usage: presentUsage(upstream.usage, billed.tokens, billed.charged, billed.endpoint.outputNano),
      ...(metadata ? { openrouter_metadata: metadata } : {}),
    };
  },

  stream(facts, endpoint) {
    return chunkRewriter(facts.genId, facts.model, facts.provider, endpoint, facts);
  },

  errorBody: openAiErrorBody,
};
