import type { ApiError } from "../../request/errors";

/**
 * What answers a route (src/api/model-routes.ts maps each to its handler): `request` the request path in
 * the API's protocol (src/serve/serve-request.ts), `count-tokens` its token count (src/serve/count-tokens.ts),
 * `embeddings` the embeddings request path (src/serve/serve-embeddings.ts).
 */
export type RouteServes = "request" | "count-tokens" | "embeddings";

/** One route of an inbound API, its path under the API's prefix (`/api/v1`). */
export type InboundRoute<Serves extends RouteServes = RouteServes> =
  | { readonly method: "POST"; readonly path: string; readonly serves: Serves }
  /** A refusal the API words itself (what a stateless router does not offer); `path` is the request's, under the prefix. */
  | { readonly method: "POST" | "ALL"; readonly path: string; readonly serves: "refusal"; refusal(method: string, path: string): ApiError };

/** How a request on a path no route takes is told where this API is (src/api/wrong-path.ts); absent: as OpenAI's SDKs are told. */
export type WrongPathHints = {
  /** A header every client of this API sends (Anthropic's `anthropic-version`): any wrong path it asks is answered in this API's style. */
  readonly callerHeader?: string;
  /** The status of the refusal naming a route of this API the caller misplaced. */
  readonly misplacedStatus: 400 | 404;
  /** What that refusal says of the base URL this API's clients take, given the origin and the API's prefix. */
  misplacedBase(origin: string, prefix: string): string;
};

/**
 * An API a caller speaks to us, as the route table mounts it (src/api/model-routes.ts): its routes, how its
 * clients present their key, its error shape and its wrong-path hints. Registered in ./index.ts.
 */
export interface InboundApiEntry<Api extends string = string, Serves extends RouteServes = RouteServes> {
  /** Its name in the registry (./index.ts). */
  readonly name: string;
  /** The API it is, as the generation record names it (`inbound_api`). */
  readonly api: Api;
  /** Its routes, in the order they are mounted; the first is its main route (its first segment is the API's own: `messages`). */
  readonly routes: readonly InboundRoute<Serves>[];
  /** How its clients present their key: `Authorization: Bearer` only, or Anthropic's `x-api-key` too. */
  readonly keyHeaders: "authorization" | "authorization or x-api-key";
  readonly wrongPath?: WrongPathHints;
  /** The caller's error body for a refused or failed request. */
  errorBody(err: Pick<ApiError, "status" | "message" | "metadata">): unknown;
}
