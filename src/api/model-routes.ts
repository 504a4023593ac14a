import { Hono, type Context, type Handler, type MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../keys/caller";
import { requireKey, requireKeyOrApiKey } from "./auth";
import { CALLER_PROTOCOLS, OWN_PATH_APIS, type CallerProtocol, type InboundApiEntry, type InboundApiName, type InboundRoute } from "../protocols/inbound";
import { serveRequest } from "../serve/serve-request";
import { countTokens } from "../serve/count-tokens";
import { serveEmbeddings } from "../serve/serve-embeddings";
import { ApiError } from "../request/errors";

/** A refusal outside the request path (the key, what a stateless router does not offer), in the API's error shape. */
const refusedIn = (api: InboundApiEntry) => (c: Context<AppEnv>, err: ApiError) => c.json(api.errorBody(err), err.status, err.headers);

/** The key check of an API's routes, its 401 in the API's error shape. */
function keyCheck(api: InboundApiEntry): MiddlewareHandler<AppEnv> {
  const refused = refusedIn(api);
  if (api.keyHeaders === "authorization or x-api-key") return requireKeyOrApiKey(refused);
  return createMiddleware<AppEnv>(async (c, next) => {
    try {
      await requireKey(c, next);
    } catch (err) {
      if (err instanceof ApiError) return refused(c, err);
      throw err;
    }
  });
}

/** What answers one route of a caller protocol. */
function callerHandler(protocol: CallerProtocol<InboundApiName>, route: InboundRoute<"request" | "count-tokens">): Handler<AppEnv> {
  if (route.serves === "refusal") {
    const refused = refusedIn(protocol);
    return (c) => refused(c, route.refusal(c.req.method, new URL(c.req.url).pathname.replace(/^\/api\/v1/, "")));
  }
  return route.serves === "request" ? (c) => serveRequest(c, protocol) : (c) => countTokens(c, protocol);
}

/** What answers one route of an API with its own request path. */
function ownPathHandler(api: InboundApiEntry<InboundApiName, "embeddings">, route: InboundRoute<"embeddings">): Handler<AppEnv> {
  if (route.serves === "refusal") {
    const refused = refusedIn(api);
    return (c) => refused(c, route.refusal(c.req.method, new URL(c.req.url).pathname.replace(/^\/api\/v1/, "")));
  }
  return (c) => serveEmbeddings(c);
}

function mount<A extends InboundApiEntry>(routes: Hono<AppEnv>, api: A, handler: (route: A["routes"][number]) => Handler<AppEnv>) {
  const key = keyCheck(api);
  for (const route of api.routes) routes.on(route.method, route.path, key, handler(route));
}

/**
 * The model APIs (`/chat/completions`, `/messages`, `/responses`, `/embeddings`, …): every route of every
 * inbound API registered in src/protocols/inbound/index.ts, each behind its key check, none named here.
 */
export const modelRoutes = new Hono<AppEnv>();
for (const protocol of Object.values(CALLER_PROTOCOLS)) mount(modelRoutes, protocol, (route) => callerHandler(protocol, route));
for (const api of Object.values(OWN_PATH_APIS)) mount(modelRoutes, api, (route) => ownPathHandler(api, route));
