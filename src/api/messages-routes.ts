import { Hono, type Context } from "hono";
import type { AppEnv } from "../env";
import { requireKeyOrApiKey } from "./auth";
import { CALLER_PROTOCOLS } from "../protocols/inbound";
import { serveRequest } from "../serve/serve-request";
import { countTokens } from "../serve/count-tokens";
import type { ApiError } from "../request/errors";

const messages = CALLER_PROTOCOLS["anthropic-messages"];

/** A refusal before the request path (the key), in Anthropic's error shape. */
const refused = (c: Context<AppEnv>, err: ApiError) => c.json(messages.errorBody(err), err.status, err.headers);

export const messagesRoutes = new Hono<AppEnv>();

/** Anthropic's Messages API (the request path: src/serve/serve-request.ts); any `anthropic-version` is accepted. */
messagesRoutes.post("/messages", requireKeyOrApiKey(refused), (c) => serveRequest(c, messages));

/** Anthropic's token count: the carrier's own count for an Anthropic model, else our estimate; for keys that may spend, rate-limited per key (src/serve/count-tokens.ts). */
messagesRoutes.post("/messages/count_tokens", requireKeyOrApiKey(refused), (c) => countTokens(c, messages));
