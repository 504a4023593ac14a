import type { CarrierProtocol } from "../carrier-protocol";
import { returnedChoices } from "../../../request/billed-fields";
import { excludesReasoning } from "../../../request/reasoning";
import { geminiBody, NOT_TAKEN } from "./request";
import { presentFields } from "../../../request/present-fields";
import { geminiAnswer } from "./answer";
import { GeminiStreamDecoder } from "./stream";
import { geminiEmbeddings } from "./embeddings";
import { thinkingLeftOut } from "../thinking-rules";

/**
 * Google's Gemini API (`POST {base}/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`,
 * `x-goog-api-key`): the chat request as contents, parts and a generation config (./request.ts), the
 * response and its stream decoded into chat completions and chunks (./answer.ts, ./stream.ts).
 */
export const gemini: CarrierProtocol = {
  name: "gemini",
  caching: "implicit",
  basePath: "",
  defaultAuth: "x-goog-api-key",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },

  bodies(body) {
    // Gemini has no `user` field: the caller's user (hashed) does not travel.
    return (endpoint) => JSON.stringify(geminiBody(body, endpoint));
  },

  requestHeaders() {
    return null;
  },

  leftOut(body, endpoint) {
    return [...presentFields(body, NOT_TAKEN), ...thinkingLeftOut(body, endpoint)];
  },

  url(base, endpoint, stream) {
    const model = encodeURIComponent(endpoint.upstream_model);
    return `${base.replace(/\/$/, "")}/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;
  },

  answer(json, body) {
    return geminiAnswer(json, excludesReasoning(body));
  },

  isEventStream(contentType) {
    return contentType.includes("text/event-stream");
  },

  embeddings: geminiEmbeddings,
  tokenCount: null,

  streamDecoder(body) {
    return new GeminiStreamDecoder(returnedChoices(body), excludesReasoning(body)).decode;
  },
};
