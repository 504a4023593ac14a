import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { requireKey } from "./auth";
import { CALLER_PROTOCOLS } from "../protocols/inbound";
import { serveRequest } from "../serve/serve-request";
import { ApiError } from "../request/errors";

const responses = CALLER_PROTOCOLS["openai-responses"];

/** A refusal outside the request path (the key, what a stateless router does not offer), in the Responses API's error shape. */
const refused = (c: Context<AppEnv>, err: ApiError) => c.json(responses.errorBody(err), err.status, err.headers);

/** `requireKey`, its 401 in the Responses API's error shape (OpenAI's `type` and `param` included). */
const requireResponsesKey = createMiddleware<AppEnv>(async (c, next) => {
  try {
    await requireKey(c, next);
  } catch (err) {
    if (err instanceof ApiError) return refused(c, err);
    throw err;
  }
});

export const responsesRoutes = new Hono<AppEnv>();

/** OpenAI's Responses API, stateless (the request path: src/serve/serve-request.ts). */
responsesRoutes.post("/responses", requireResponsesKey, (c) => serveRequest(c, responses));

/**
 * `POST /responses/compact` is refused (docs/api/responses.md, What is stateless): OpenAI's compaction
 * returns an opaque item that only the server that made it can expand on the next turn, which would
 * need a model call of its own; a client of this router keeps its history and trims it itself.
 */
responsesRoutes.post("/responses/compact", requireResponsesKey, (c) =>
  refused(
    c,
    new ApiError(
      400,
      "POST /responses/compact is not offered: this router is stateless (as OpenRouter's /responses is) and compacts no conversations. Send the conversation in `input` as you keep it (shortened on your side when it grows too long); docs/api/responses.md.",
    ),
  ),
);

/** Stored responses (retrieve, delete, cancel, input items): none are kept, so none is found. */
responsesRoutes.all("/responses/*", requireResponsesKey, (c) =>
  refused(
    c,
    new ApiError(
      404,
      `${c.req.method} ${new URL(c.req.url).pathname.replace(/^\/api\/v1/, "")}: this router keeps no responses (it is stateless: store is always false), so none can be retrieved, cancelled or listed.`,
    ),
  ),
);
