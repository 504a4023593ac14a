import type { CallerProtocol } from "../caller-protocol";
import { readModelRequest } from "../../../request/json-body";
import { parseChatRequest } from "../../../request/chat-request";
import { chatFromResponses } from "./request";
import { outputItems, responseObject, responsesUsage, statusOf } from "./answer";
import { noSealKey, openEnvelopes, PendingSeals, requireSealer } from "./reasoning-envelope";
import { responsesStream } from "./stream";
import { responsesErrorBody } from "./errors";
import { callerCallItems, echoedToolNames } from "./tools";
import { ApiError } from "../../../request/errors";

/**
 * OpenAI's Responses API, stateless as OpenRouter's (`POST /api/v1/responses`: the openai SDK's
 * `responses`, Codex, the Agents SDK): the request translated into the canonical request (./request.ts),
 * answers as `response` objects and streams as its documented events (./answer.ts, ./stream.ts), errors
 * in OpenAI's shape. Reasoning goes back and forth sealed (./reasoning-envelope.ts): opened in an async
 * step before the pure read, sealed in one after the pure render.
 */
export const openAiResponses: CallerProtocol<"responses"> = {
  name: "openai-responses",
  api: "responses",
  routes: [
    { method: "POST", path: "/responses", serves: "request" },
    /**
     * `POST /responses/compact` is refused (docs/api/responses.md, What is stateless): OpenAI's compaction
     * returns an opaque item that only the server that made it can expand on the next turn, which would
     * need a model call of its own; a client of this router keeps its history and trims it itself.
     */
    {
      method: "POST",
      path: "/responses/compact",
      serves: "refusal",
      refusal: () =>
        new ApiError(
          400,
          "POST /responses/compact is not offered: this router is stateless (as OpenRouter's /responses is) and compacts no conversations. Send the conversation in `input` as you keep it (shortened on your side when it grows too long); docs/api/responses.md.",
        ),
    },
    /** Stored responses (retrieve, delete, cancel, input items): none are kept, so none is found. */
    {
      method: "ALL",
      path: "/responses/*",
      serves: "refusal",
      refusal: (method, path) =>
        new ApiError(
          404,
          `${method} ${path}: this router keeps no responses (it is stateless: store is always false), so none can be retrieved, cancelled or listed.`,
        ),
    },
  ],
  keyHeaders: "authorization",
  streamContentType: "text/event-stream; charset=utf-8",

  async read(req, sealer) {
    const { json, bytes } = await readModelRequest(req);
    const { chat, echo, dropped } = chatFromResponses(json, await openEnvelopes(json, sealer));
    // Asked for sealed reasoning that cannot be sealed: refused before any carrier is asked, never sent in the clear.
    if (echo.include_encrypted_reasoning === true && sealer === null) throw noSealKey();
    return { body: parseChatRequest(chat), bytes, echo, dropped };
  },

  capField: () => "max_output_tokens",

  async answer(answer, billed, facts) {
    const choice = (answer.choices[0] ?? {}) as { finish_reason?: unknown };
    const { status, incomplete_details } = statusOf(typeof choice.finish_reason === "string" ? choice.finish_reason : null);
    const seals = facts.echo.include_encrypted_reasoning === true ? new PendingSeals() : null;
    // The carrier's calls named back as the caller's tools (namespaced functions, custom tools: ./tools.ts).
    const output = callerCallItems(outputItems(answer, facts.genId, seals), echoedToolNames(facts.echo));
    if (seals) {
      const sealer = requireSealer(facts.sealer);
      for (const item of output) if (typeof item.encrypted_content === "string") item.encrypted_content = await seals.fill(item.encrypted_content, sealer);
    }
    return responseObject(facts, { status, incomplete_details, output, usage: responsesUsage(billed.tokens), completedAt: Math.floor(Date.now() / 1000) });
  },

  stream(facts) {
    return responsesStream(facts);
  },

  errorBody(err) {
    return responsesErrorBody(err);
  },
};
