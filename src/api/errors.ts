import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An error the API reports as `{"error":{"code":status,"message":...}}` with `code` equal to the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly metadata?: Record<string, unknown>,
    /** Response headers that go with the error (e.g. a 429's X-RateLimit-* and Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export function errorBody(status: number, message: string, metadata?: Record<string, unknown>) {
  return { error: metadata ? { code: status, message, metadata } : { code: status, message } };
}

export function errorResponse(c: Context, status: ContentfulStatusCode, message: string, metadata?: Record<string, unknown>) {
  return c.json(errorBody(status, message, metadata), status);
}
