import type { CarrierProtocol } from "../carrier-protocol";
import { presentFields } from "../../../request/present-fields";
import { excludesReasoning } from "../../../request/reasoning";
import { openAiEmbeddings } from "../openai-embeddings";
import { NOT_TAKEN, responsesBody } from "./request";
import { responsesAnswer } from "./answer";
import { ResponsesStreamDecoder } from "./stream";
import { thinkingLeftOut } from "../thinking-rules";

/**
 * OpenAI's Responses API (`POST {base}/responses`, a Bearer key), stateless (`store: false`): the chat
 * request as instructions, input items and flat function tools (./request.ts); the response and its
 * typed event stream decoded into chat completions and chunks (./answer.ts, ./stream.ts). The models
 * that take tools with reasoning only here (OpenAI's GPT-6.1 Sol) are served in it: docs/protocols.md.
 */
export const openAiResponses: CarrierProtocol = {
  name: "openai-responses",
  caching: "implicit",
  basePath: "/v1",
  defaultAuth: "bearer",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },

  bodies(body, stream, userHash) {
    return (endpoint) => JSON.stringify(responsesBody(body, stream, userHash, endpoint));
  },

  requestHeaders() {
    return null;
  },

  leftOut(body, endpoint) {
    return [...presentFields(body, NOT_TAKEN), ...thinkingLeftOut(body, endpoint)];
  },

  url(base) {
    return `${base.replace(/\/$/, "")}/responses`;
  },

  answer(json, body) {
    return responsesAnswer(json, excludesReasoning(body));
  },

  isEventStream(contentType) {
    return contentType.includes("text/event-stream");
  },

  embeddings: openAiEmbeddings,
  tokenCount: null,

  streamDecoder(body) {
    return new ResponsesStreamDecoder(excludesReasoning(body)).decode;
  },
};
