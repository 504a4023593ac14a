import type { ApiError } from "../../request/errors";

/** OpenAI's (and OpenRouter's) error body, `{"error":{"code":status,"message":…}}`: chat's and embeddings'. */
export function openAiErrorBody(err: Pick<ApiError, "status" | "message" | "metadata">): unknown {
  return { error: err.metadata ? { code: err.status, message: err.message, metadata: err.metadata } : { code: err.status, message: err.message } };
}
