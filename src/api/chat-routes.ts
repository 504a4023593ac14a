import { Hono } from "hono";
import type { AppEnv } from "../env";
import { requireKey } from "./auth";
import { CALLER_PROTOCOLS } from "../protocols/inbound";
import { serveRequest } from "../serve/serve-request";
import { serveEmbeddings } from "../serve/serve-embeddings";

export const chatRoutes = new Hono<AppEnv>();

/** OpenAI's Chat Completions (the request path: src/serve/serve-request.ts). */
chatRoutes.post("/chat/completions", requireKey, (c) => serveRequest(c, CALLER_PROTOCOLS["openai-chat"]));

/** Embeddings (src/serve/serve-embeddings.ts): routed, held, charged and recorded as completions are. */
chatRoutes.post("/embeddings", requireKey, (c) => serveEmbeddings(c));
