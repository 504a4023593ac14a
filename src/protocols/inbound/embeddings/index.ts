import type { InboundApiEntry } from "../inbound-api";
import { openAiErrorBody } from "../openai-error";

/**
 * OpenAI's (and OpenRouter's) Embeddings API (`POST /api/v1/embeddings`): an API of its own kind, not a
 * caller protocol — its request is read and answered by its own request path (src/serve/serve-embeddings.ts,
 * src/request/embeddings-request.ts); it is registered beside the caller protocols for its route, its
 * record's `inbound_api` and its error shape (OpenAI's).
 */
export const embeddings: InboundApiEntry<"embeddings", "embeddings"> = {
  name: "embeddings",
  api: "embeddings",
  routes: [{ method: "POST", path: "/embeddings", serves: "embeddings" }],
  keyHeaders: "authorization",
  errorBody: openAiErrorBody,
};
