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

/** Anthropic's token count: our estimate of the prompt for the model, free and not recorded. */
messagesRoutes.post("/messages/count_tokens", requireKeyOrApiKey(refused), (c) => countTokens(c, messages));
