import type { PricedEndpoint } from "../../catalog/catalog";
import type { CarrierAuthName } from "../../catalog/schema";
import type { ChatRequest } from "../../request/chat-request";
import type { AnswerOrUnusable } from "../../request/answer";
import type { SseEvent } from "../../http/sse-parser";
import type { EmbeddingsRequest } from "../../request/embeddings-request";

/** A carrier protocol's embeddings endpoint: the canonical embeddings request out, vectors and usage back. Pure functions. */
export interface EmbeddingsCarrier {
  /** The URL of the carrier's embeddings endpoint, from its base URL. */
  url(base: string, endpoint: PricedEndpoint): string;
  /** The attempt's body: the carrier's model id, floats always asked for (base64 is ours to encode). Throws `Untranslatable` for what it cannot take. */
  body(req: EmbeddingsRequest, endpoint: PricedEndpoint, userHash: string | null): string;
  /** The carrier's answer as one vector per input, in input order, and the input tokens it reports (null when it reports none); or why it is unusable. */
  answer(json: unknown, inputs: number): { vectors: number[][]; promptTokens: number | null } | { unusable: string };
}

/**
 * A carrier protocol's token count (Anthropic's `POST /v1/messages/count_tokens`, free at the carrier): the
 * input tokens the carrier bills for a request's prompt, counted by its own tokenizer. Pure functions.
 */
export interface TokenCountCarrier {
  /** The URL of the carrier's token-count endpoint, from its base URL. */
  url(base: string): string;
  /** The count's body: the prompt as the completion would send it (its messages, system, tools, thinking), no generation fields. Throws `Untranslatable` as `bodies` does. */
  body(req: ChatRequest, endpoint: PricedEndpoint): string;
  /** The input tokens the carrier's answer reports; null when it is unusable. */
  answer(json: unknown): number | null;
}

/**
 * One carrier protocol: how a canonical request goes to a carrier that speaks it, and how its answer
 * comes back as the canonical answer (src/request/answer.ts). Pure functions, table-tested; registered
 * in ./index.ts, chosen by the catalog (a carrier's `protocol`); the request path calls each at one place
 * (src/carriers/carrier-call.ts for the request, src/relay/ for the answer and the stream).
 */
export interface CarrierProtocol {
  /** Its name in the catalog (a carrier's `protocol`), the key of its registry line. */
  readonly name: string;
  /**
   * Whether a carrier of this protocol caches prompts without being asked ("implicit": a priced cache read
   * may happen to any request) or only where the caller marks it ("explicit": `cache_control`). Shown on
   * the endpoints' listing as `supports_implicit_caching`.
   */
  readonly caching: "implicit" | "explicit";
  /** What this protocol's base URLs end with ("/v1" for OpenAI-compatible ones): the local CARRIER_BASE_URL_OVERRIDE appends it. */
  readonly basePath: string;
  /** How its carriers take their key unless the catalog says otherwise. */
  readonly defaultAuth: CarrierAuthName;
  /**
   * The body of each attempt, prepared once per request (what does not depend on the carrier done once,
   * however many carriers are tried): the router's own fields left out, `user` as its hash, the carrier's
   * model id. Throws `Untranslatable` (src/request/errors.ts) for what the protocol cannot express.
   */
  bodies(body: ChatRequest, stream: boolean, userHash: string | null): (endpoint: PricedEndpoint) => string;
  /** Headers this request needs beyond the protocol's own (e.g. Anthropic's beta flag for structured outputs), or null. */
  requestHeaders(body: ChatRequest, endpoint: PricedEndpoint): Record<string, string> | null;
  /** The URL of the carrier's completion endpoint, from its base URL. */
  url(base: string, endpoint: PricedEndpoint, stream: boolean): string;
  /** The protocol's own request headers (the key is added by its auth: src/carriers/carrier-call.ts). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The request's fields this protocol leaves out (it has no such parameter), named in the routing
   * metadata (`params.dropped_parameters`); `provider.require_parameters` keeps such carriers out instead.
   * Also what this endpoint takes otherwise than asked (its catalog capabilities: a forced tool choice it refuses).
   */
  leftOut(body: ChatRequest, endpoint: PricedEndpoint): string[];
  /** A non-stream answer's JSON as the canonical answer, or why it is unusable; `body` is the request it answers (e.g. `reasoning.exclude`). */
  answer(json: unknown, body: ChatRequest): AnswerOrUnusable;
  /** Whether an answer's content type is this protocol's event stream. */
  isEventStream(contentType: string): boolean;
  /**
   * Turns the carrier's stream events into canonical chunk events, for one stream (it may keep state:
   * block indexes, usage so far). Null: the carrier's events already are canonical chunks (relayed
   * without being parsed).
   */
  streamDecoder(body: ChatRequest): ((event: SseEvent) => SseEvent[]) | null;
  /** Its embeddings endpoint; null when the protocol has none (Anthropic). */
  readonly embeddings: EmbeddingsCarrier | null;
  /** Its token-count endpoint; null when it has none we use (only Anthropic's is: the count of an Anthropic model is then exact). */
  readonly tokenCount: TokenCountCarrier | null;
}
