import type { CallerProtocol } from "../caller-protocol";
import { readModelRequest } from "../../../request/json-body";
import { parseChatRequest } from "../../../request/chat-request";
import { chatFromResponses } from "./request";
import { outputItems, responseObject, responsesUsage, statusOf } from "./answer";
import { ResponsesStream } from "./stream";

/**
 * OpenAI's Responses API, stateless as OpenRouter's (`POST /api/v1/responses`: the openai SDK's
 * `responses`, Codex, the Agents SDK): the request translated into the canonical request (./request.ts),
 * answers as `response` objects and streams as its documented events (./answer.ts, ./stream.ts), errors
 * in OpenAI's shape.
 */
export const openAiResponses: CallerProtocol = {
  name: "openai-responses",
  api: "responses",
  streamContentType: "text/event-stream; charset=utf-8",

  async read(req) {
    const { json, bytes } = await readModelRequest(req);
    const { chat, echo } = chatFromResponses(json);
    return { body: parseChatRequest(chat), bytes, echo };
  },

  answer(answer, billed, facts) {
    const choice = (answer.choices[0] ?? {}) as { finish_reason?: unknown };
    const { status, incomplete_details } = statusOf(typeof choice.finish_reason === "string" ? choice.finish_reason : null);
    return responseObject(facts, {
      status,
      incomplete_details,
      output: outputItems(answer, facts.genId, facts.echo.include_encrypted_reasoning === true),
      usage: responsesUsage(billed.tokens),
      completedAt: Math.floor(Date.now() / 1000),
    });
  },

  stream(facts, endpoint) {
    return new ResponsesStream(facts, endpoint);
  },

  errorBody(err) {
    // OpenAI's shape with OpenRouter's numeric code, as /chat/completions answers.
    return { error: err.metadata ? { code: err.status, message: err.message, metadata: err.metadata } : { code: err.status, message: err.message } };
  },
};
