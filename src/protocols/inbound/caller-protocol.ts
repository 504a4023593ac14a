import type { PricedEndpoint } from "../../catalog/catalog";
import type { ChatRequest } from "../../request/chat-request";
import type { CanonicalAnswer } from "../../request/answer";
import type { InboundApiEntry } from "./inbound-api";
import type { CarrierUsage } from "../../request/usage";
import type { Charge } from "../../request/charge";
import type { OutputMeter } from "../../request/token-estimate";
import type { SseEvent } from "../../http/sse-parser";

/**
 * The deployment's sealing of what a caller carries from one turn to the next (a Responses reasoning
 * item's `encrypted_content`), bound to the caller's account: authenticated encryption, async as
 * WebCrypto is (src/serve/reasoning-sealer.ts). Protocols call it in an async step before their pure
 * read and after their pure render, never inside them.
 */
export interface Sealer {
  /** `plain` sealed for the account: an opaque URL-safe token no caller can read or alter. */
  seal(plain: string): Promise<string>;
  /** What a token sealed for this account holds; null when it was altered, sealed for another account or under a key no longer kept. */
  open(token: string): Promise<string | null>;
}

/** What the caller's answer names, beyond what the carrier sent. */
export type AnswerFacts = {
  genId: string;
  /** The model as the caller named it (the candidate that served). */
  model: string;
  /** The carrier's display name. */
  provider: string;
  /** Unix seconds, when the carrier gives none. */
  created: number;
  /** What the caller's answer repeats of its request (the protocol's own `read` says what); empty when nothing. */
  echo: Record<string, unknown>;
  /** Routing metadata the caller asked for (computed when the answer is rendered: the attempts are known then); null when not asked. */
  metadata: () => Record<string, unknown> | null;
  /** The account's sealer; null when the deployment has no key (a protocol that needs one refused the request when reading it). */
  sealer: Sealer | null;
};

/** What a whole answer was billed: its tokens, the charge, and the endpoint that priced them. */
export type Billed = { tokens: CarrierUsage; charged: Charge; endpoint: PricedEndpoint };

/** Why a stream must end early: the status and message its error event carries. */
export type ChunkFailure = { status: number; message: string };

/** A JSON object as a stream chunk holds it. */
export type ChunkJson = Record<string, unknown>;

/**
 * One canonical chunk as the stream's account read it (src/relay/stream-account.ts), for the renderer: its
 * JSON when the account parsed it, and the carrier's usage it carried with the cost that usage shows the caller.
 */
export type ReadChunk = {
  /** The chunk's JSON, parsed for this call alone (the renderer may rewrite it in place); null when it was read unparsed (the renderer swaps its head: `plain`). */
  json: ChunkJson | null;
  /** The carrier's usage in this chunk; undefined when it carries none. */
  usage: CarrierUsage | undefined;
  /** What this chunk's usage shows the caller it costs (insurance applied): the charge, whatever happens next. */
  shown: Charge | undefined;
};

/** What a stream's account knows when the renderer writes the stream's end. */
export interface StreamSummary {
  readonly usage: CarrierUsage | undefined;
  readonly finishReason: string | null;
  /** What was delivered, for the estimate when the carrier reported no usage. */
  readonly output: OutputMeter;
}

/** A renderer's next state and the caller's stream text it wrote. */
export type Rendered<S> = { readonly state: S; readonly text: string };

/**
 * One caller's stream, rendered from canonical chunk events by pure functions: no accounting (the relay's
 * StreamAccount reads every chunk first and hands over what it read) and no state of their own. The state
 * (`S`: plain readonly data, only what the protocol's events need — open blocks, sequence numbers) is the
 * relay's one variable: it starts at `initial` and each call gives the next one back with its text.
 */
export interface StreamRenderer<S = unknown> {
  /** The choices this protocol's stream answers: every one (chat), or the first (protocols that answer one choice). */
  readonly choices: "all" | "first";
  /** The state before the first chunk (from the answer facts and the endpoint). */
  readonly initial: S;
  /**
   * The chunk's text after the carrier's head, when the renderer rewrites the chunk by swapping that head,
   * unparsed (chat): the account then scans that text unparsed too. Null (or absent): the chunk is parsed.
   */
  plain?(state: S, data: string): string | null;
  /** One canonical chunk, as the account read it, as the caller's stream text, and the state after it. */
  rewrite(state: S, event: SseEvent, chunk: ReadChunk): Rendered<S>;
  /** What is sent while the carrier is silent (every STREAM_PING_MS), for protocols with a keep-alive event (Anthropic's `ping`). */
  keepalive?(state: S): Rendered<S>;
  /** The stream's last text, from what its account knows: the routing metadata when asked, the error event when it failed, the end marker. */
  end(state: S, failure: ChunkFailure | null, summary: StreamSummary): string;
  /**
   * An async last step over the rendered stream's bytes before they reach the caller (the Responses stream
   * seals its reasoning there: WebCrypto is async, the renderer is not); absent when there is none.
   */
  readonly asyncStep?: TransformStream<Uint8Array, Uint8Array>;
}

/**
 * One caller protocol (what a client speaks to us): how its request becomes the canonical request
 * (src/request/chat-request.ts) and how the canonical answer, stream and errors are rendered back in it,
 * with the routes that take it (./inbound-api.ts). Pure functions, table-tested; registered in ./index.ts;
 * the request path (src/serve/serve-request.ts) calls each at one place.
 */
export interface CallerProtocol<Api extends string = string> extends InboundApiEntry<Api, "request" | "count-tokens"> {
  /**
   * The caller's request as the canonical request, and its size in bytes (what the hold bounds the prompt
   * by): 413 over the limit, 400 when it is not one; with what its answer repeats of the request, if anything.
   * `sealer` opens what the caller brought back sealed (null: the deployment has no key). `dropped`: the
   * tools the request declared that no carrier here runs (hosted tools), left out and named in the answer.
   * `unknown`: the fields of a protocol that passes unknown fields on (chat) that the router does not know, named in the answer.
   */
  read(
    req: Request,
    sealer: Sealer | null,
  ): Promise<{ body: ChatRequest; bytes: number; echo?: Record<string, unknown>; dropped?: string[]; unknown?: string[] }>;

  /** The request's completion cap as this protocol names it (`max_tokens`, `max_completion_tokens`, `max_output_tokens`): what a refusal of it says. */
  capField(body: ChatRequest): string;

  /** A prompt to count (a token-count request: the request's shape, no completion asked), as the canonical request; for protocols with a count endpoint. */
  readPrompt?(req: Request): Promise<ChatRequest>;
  /**
   * The caller's answer from the canonical answer, with the usage billed, what it was charged and the
   * endpoint's prices; a promise of it when an async step follows the pure render (sealing).
   */
  answer(answer: CanonicalAnswer, billed: Billed, facts: AnswerFacts): unknown;
  /** The renderer of one stream, for the endpoint serving it (its prices give the cost of a usage event). */
  stream(facts: AnswerFacts, endpoint: PricedEndpoint): StreamRenderer;
  /** The content type of the caller's stream. */
  readonly streamContentType: string;
}
