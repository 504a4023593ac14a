import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * A request refused or failed, in no protocol's words yet: its HTTP status, a message for the caller,
 * metadata and headers. Each inbound protocol renders it in its own error shape (api/error-body.ts for
 * the OpenAI/OpenRouter one).
 */
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

/**
 * A request a carrier protocol cannot express (audio to Anthropic, a tool call whose arguments are not
 * JSON, more cache breakpoints than the carrier takes): that carrier is skipped as having rejected it
 * (400) without being called, and when none is left the caller gets the 400 with this message.
 */
export class Untranslatable extends Error {}
