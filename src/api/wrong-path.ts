import type { Context } from "hono";
import { HOUSE_API, INBOUND_APIS, type InboundApiEntry } from "../protocols/inbound";
import { ApiError } from "../request/errors";

/** A route of the API as Hono lists it (`app.routes`): its method and its path under the API's prefix. */
export type ApiRoute = { readonly method: string; readonly path: string };

/** Which inbound API a wrong path answers in (src/protocols/inbound/index.ts): Anthropic's, the Responses API's or OpenAI/OpenRouter's. */
export type WrongPathStyle = InboundApiEntry;

/** How a request no route takes is answered: the refusal (with `Allow` among its headers for a real route's other method) and the caller's error shape. */
export type WrongPath = { error: ApiError; style: WrongPathStyle };

type Pattern = { methods: string[]; segments: string[] };

/** The routes by path (methods merged); middleware and catch-alls (`*`) are no route a caller means. */
function patterns(routes: readonly ApiRoute[]): Pattern[] {
  const byPath = new Map<string, Pattern>();
  for (const r of routes) {
    if (r.method === "ALL" || r.path.includes("*")) continue;
    const p = byPath.get(r.path) ?? { methods: [], segments: r.path.split("/").filter(Boolean) };
    if (!p.methods.includes(r.method)) p.methods.push(r.method);
    byPath.set(r.path, p);
  }
  return [...byPath.values()];
}

/**
 * The API a path's segments point to: the first (in registry order) whose own segment (its main route's
 * first) the path holds — the house's API last, whatever its segment, as the default it is.
 */
const OWN_SEGMENT = INBOUND_APIS.filter((a) => a !== HOUSE_API).map((api) => ({ api, segment: api.routes[0]!.path.split("/").filter(Boolean)[0]! }));

const fits = (pattern: string[], segments: string[]) => pattern.length === segments.length && pattern.every((p, i) => p.startsWith(":") || p === segments[i]);

/**
 * Explains a request no route takes: `method` on `path` (the URL's path, as sent), `prefix` being where
 * the API is mounted (`/api/v1`). A real route asked with another method is a 404 naming the methods it
 * takes (with `Allow`): the specification's error table answers a route not found with 404, and has no 405. Otherwise the route the path ends with, if any, is the one meant — the slips of a base URL:
 * `/v1/chat/completions` (no `/api`), `/api/chat/completions` (no `/v1`), `/api/v1/v1/messages`
 * (Claude Code given `…/api/v1`: it adds `/v1/messages` itself), `/chat/completions` (the bare origin),
 * a whole route pasted as the base URL — and the answer names it and the base URL that reaches it.
 *
 * The answer is in the caller's style (each inbound API's `wrongPath` hints): the style of an API whose
 * clients all send a header it names (Anthropic's `anthropic-version`), else of the API whose own segment
 * the path holds (`/messages`: Anthropic's, `/responses`: the Responses API's), else OpenAI/OpenRouter's.
 * Its status is 404, except a misplaced route of an API that says otherwise (Anthropic's: a 400, because
 * Claude Code replaces the message of every 404 with its own). A path with no route meant stays a 404.
 */
function explainWrongPath(
  req: { method: string; path: string; origin: string; headers: (name: string) => boolean },
  prefix: string,
  all: readonly Pattern[],
): WrongPath {
  const { method, path, origin } = req;
  const segments = path.split("/").filter(Boolean);
  const prefixSegments = prefix.split("/").filter(Boolean);
  const styleOf = (s: string[]): WrongPathStyle =>
    INBOUND_APIS.find((a) => a.wrongPath?.callerHeader !== undefined && req.headers(a.wrongPath.callerHeader)) ??
    OWN_SEGMENT.find((a) => s.includes(a.segment))?.api ??
    HOUSE_API;

  // A real route, another method.
  const underPrefix = prefixSegments.every((p, i) => segments[i] === p) ? segments.slice(prefixSegments.length) : undefined;
  const exact = underPrefix && all.find((p) => fits(p.segments, underPrefix));
  if (exact) {
    const allow = exact.methods;
    return {
      error: new ApiError(404, `${method} ${path} is not offered: this route takes ${allow.join(" or ")}.`, undefined, { allow: allow.join(", ") }),
      style: styleOf(segments),
    };
  }

  // The longest route the path ends with; a route of the request's method first.
  let meant: { pattern: Pattern; tail: string[] } | undefined;
  for (const p of all) {
    const n = p.segments.length;
    const tail = segments.slice(segments.length - n);
    if (n > segments.length || !fits(p.segments, tail)) continue;
    const better =
      !meant ||
      n > meant.pattern.segments.length ||
      (n === meant.pattern.segments.length && p.methods.includes(method) && !meant.pattern.methods.includes(method));
    if (better) meant = { pattern: p, tail };
  }

  const apiBase = `${origin}${prefix}`;
  // Anthropic's clients add `/v1/messages` to their base URL, so theirs is the prefix without its `/v1`.
  const anthropicBase = `${origin}${prefix.replace(/\/v1$/, "")}`;
  const everyBase = `The API is at ${apiBase}: the base URL for OpenAI and OpenRouter SDKs and Codex; the Anthropic SDK and Claude Code take ${anthropicBase} (ANTHROPIC_BASE_URL=${anthropicBase}).`;
  if (!meant) {
    const style = styleOf(segments);
    return { error: new ApiError(404, `No route at ${method} ${path}. ${everyBase}`), style };
  }

  const style = styleOf(meant.pattern.segments);
  const methods = meant.pattern.methods.includes(method) ? [method] : meant.pattern.methods;
  const route = `${methods.join(" or ")} ${prefix}/${meant.tail.join("/")}`;
  const base = style.wrongPath ? style.wrongPath.misplacedBase(origin, prefix) : `The base URL for OpenAI and OpenRouter SDKs and Codex is ${apiBase}.`;
  const status = style.wrongPath?.misplacedStatus ?? 404;
  return { error: new ApiError(status, `No route at ${method} ${path}: did you mean ${route}? ${base}`), style };
}

/** Hono's not-found handler for the API: the refusal `explainWrongPath` gives, in the caller's error shape. */
export function wrongPathAnswer(prefix: string, routes: readonly ApiRoute[]) {
  // The routes are all registered by the time the app builds its not-found handler: read them once, not per request.
  const all = patterns(routes);
  return (c: Context) => {
    const url = new URL(c.req.url);
    const { error, style } = explainWrongPath(
      { method: c.req.method, path: url.pathname, origin: url.origin, headers: (name) => c.req.header(name) !== undefined },
      prefix,
      all,
    );
    return c.json(style.errorBody(error), error.status, error.headers);
  };
}
