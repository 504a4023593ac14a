import type { ApiError } from "../../../request/errors";
import type { ChunkFailure } from "../caller-protocol";

type Obj = Record<string, unknown>;

/**
 * OpenAI's error `type` for a status, as its API answers (the openai SDK reads `error.type`, `error.code`
 * and `error.param` into its APIError): 4xx are the caller's request, 401/403 its credentials, 402 its
 * quota, 429 a rate limit, 5xx the service.
 */
export function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 402) return "insufficient_quota";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/**
 * The request field an error names, OpenAI's `param` (`input.0`, `tools.4.name`, `store`): our refusals
 * begin with the field's path and a colon, or name the unsupported fields (the first is the param). Null
 * when the message names none.
 */
export function errorParam(message: string): string | null {
  const path = /^([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*):\s/.exec(message)?.[1];
  if (path !== undefined) return path;
  return /^Unsupported fields? for \S+: ([a-z_][a-z0-9_]*)/.exec(message)?.[1] ?? null;
}

/**
 * An error body of `/responses`, in OpenAI's shape with OpenRouter's numeric `code` (as /chat/completions
 * answers) and OpenAI's `type` and `param`, so OpenAI's clients read it as they read OpenAI's.
 */
export function responsesErrorBody(err: Pick<ApiError, "status" | "message" | "metadata">): Obj {
  const error: Obj = { code: err.status, message: err.message, type: errorType(err.status), param: errorParam(err.message) };
  if (err.metadata) error.metadata = err.metadata;
  return { error };
}

/** The `error` of a `response.failed` stream event: OpenAI's string code, and its `type` and `param` too. */
export function streamError(failure: ChunkFailure): Obj {
  return {
    code: failure.status === 429 ? "rate_limit_exceeded" : "server_error",
    message: failure.message,
    type: errorType(failure.status),
    param: null,
  };
}
