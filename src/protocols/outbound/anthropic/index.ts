import type { CarrierProtocol } from "../carrier-protocol";
import { anthropicBody, NOT_TAKEN, STRUCTURED_OUTPUTS_BETA, usesStructuredOutputs } from "./request";
import { presentFields } from "../../../request/present-fields";
import { anthropicAnswer } from "./answer";
import { AnthropicStreamDecoder } from "./stream";
import { anthropicTokenCount } from "./token-count";
import { excludesReasoning } from "../../../request/reasoning";
import { thinkingLeftOut } from "../thinking-rules";
import { budgetLeftOut } from "./thinking";

/** The `anthropic-version` every request names (the Messages API's stable version). */
export const ANTHROPIC_VERSION = "2023-06-01";

/**
 * Anthropic's Messages API (`POST {base}/v1/messages`, `x-api-key`): the chat request re-shaped into
 * system, alternating turns of blocks and tools (./request.ts), the message answer and the event stream
 * decoded into chat completions and chunks (./answer.ts, ./stream.ts); its token count (./token-count.ts).
 */
export const anthropicMessages: CarrierProtocol = {
  name: "anthropic-messages",
  caching: "explicit",
  basePath: "",
  defaultAuth: "x-api-key",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "anthropic-version": ANTHROPIC_VERSION },

  bodies(body, stream, userHash) {
    return (endpoint) => JSON.stringify(anthropicBody(body, stream, userHash, endpoint));
  },

  requestHeaders(body, endpoint) {
    // Structured outputs are a beta of the Messages API: the request names it. The caller's own flags
    // go along where this carrier takes them (its catalog `betas`); others are dropped, never a failure.
    const taken = new Set(endpoint.providerEntry.betas ?? []);
    const flags = new Set((body.anthropic_beta ?? []).filter((f) => taken.has(f)));
    if (usesStructuredOutputs(body, endpoint)) flags.add(STRUCTURED_OUTPUTS_BETA);
    return flags.size ? { "anthropic-beta": [...flags].join(",") } : null;
  },

  leftOut(body, endpoint) {
    return [...presentFields(body, NOT_TAKEN), ...thinkingLeftOut(body, endpoint), ...budgetLeftOut(body, endpoint)];
  },

  url(base) {
    return `${base.replace(/\/$/, "")}/v1/messages`;
  },

  answer(json, body) {
    return anthropicAnswer(json, excludesReasoning(body));
  },

  isEventStream(contentType) {
    return contentType.includes("text/event-stream");
  },

  embeddings: null,

  tokenCount: anthropicTokenCount,

  streamDecoder(body) {
    return new AnthropicStreamDecoder(excludesReasoning(body)).decode;
  },
};
