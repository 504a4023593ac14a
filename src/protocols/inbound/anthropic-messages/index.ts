import type { CallerProtocol } from "../caller-protocol";
import { readModelRequest } from "../../../request/json-body";
import { parseChatRequest } from "../../../request/chat-request";
import { betaFlags, chatFromMessages } from "./request";
import { anthropicUsage, contentBlocks, messageId, stopReason } from "./answer";
import { messagesStream } from "./stream";

/** Our statuses as Anthropic's error types. */
const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  503: "overloaded_error",
  529: "overloaded_error",
};

/**
 * Anthropic's Messages API (`POST /api/v1/messages`: the Anthropic SDK and Claude Code with the base URL
 * `<origin>/api`): the request translated into the canonical request (./request.ts), answers as
 * `message` objects and streams as Anthropic's events (./answer.ts, ./stream.ts), errors in its shape.
 */
export const anthropicMessagesCaller: CallerProtocol<"messages"> = {
  name: "anthropic-messages",
  api: "messages",
  routes: [
    { method: "POST", path: "/messages", serves: "request" },
    // Anthropic's token count: the carrier's own count for an Anthropic model, else our estimate (src/serve/count-tokens.ts).
    { method: "POST", path: "/messages/count_tokens", serves: "count-tokens" },
  ],
  // The Anthropic SDK sends `x-api-key`; Claude Code with ANTHROPIC_AUTH_TOKEN a Bearer token. Any `anthropic-version` is accepted.
  keyHeaders: "authorization or x-api-key",
  wrongPath: {
    // Every Anthropic client sends it.
    callerHeader: "anthropic-version",
    // Not 404: Claude Code replaces the message of every 404 with its own ("There's an issue with the selected
    // model … It may not exist"), which sends its user looking for a model; it prints a 400's message as it is.
    misplacedStatus: 400,
    misplacedBase(origin, prefix) {
      // Anthropic's clients add `/v1/messages` to their base URL, so theirs is the prefix without its `/v1`.
      const base = `${origin}${prefix.replace(/\/v1$/, "")}`;
      return `Anthropic's clients add /v1/messages to their base URL themselves, so it is ${base} (Claude Code: ANTHROPIC_BASE_URL=${base}).`;
    },
  },
  streamContentType: "text/event-stream; charset=utf-8",

  async read(req) {
    const { json, bytes } = await readModelRequest(req);
    return { body: parseChatRequest(chatFromMessages(json, betaFlags(req.headers.get("anthropic-beta")))), bytes };
  },

  capField: () => "max_tokens",

  async readPrompt(req) {
    const { json } = await readModelRequest(req);
    // count_tokens takes the Messages body without max_tokens.
    return parseChatRequest(chatFromMessages({ max_tokens: 1, ...json, stream: undefined }));
  },

  answer(answer, billed, facts) {
    const choice = (answer.choices[0] ?? {}) as { finish_reason?: unknown };
    const metadata = facts.metadata();
    return {
      id: messageId(facts.genId),
      type: "message",
      role: "assistant",
      model: facts.model,
      content: contentBlocks(answer),
      stop_reason: stopReason(typeof choice.finish_reason === "string" ? choice.finish_reason : null),
      stop_sequence: null,
      usage: anthropicUsage(billed.tokens),
      ...(metadata ? { openrouter_metadata: metadata } : {}),
    };
  },

  stream(facts) {
    return messagesStream(facts);
  },

  errorBody(err) {
    const type = ERROR_TYPES[err.status] ?? (err.status >= 500 ? "api_error" : "invalid_request_error");
    return { type: "error", error: { type, message: err.message } };
  },
};
