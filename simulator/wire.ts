// What each simulated carrier protocol provides: how its request is read (and refused), how its
// answer and stream are written, how its errors look. The protocol-neutral engine is in server.ts.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Directives } from "./directives";
import type { CompletionPlan } from "./tokens";
import type { Json } from "./http";
import type { ModelRules } from "./model-rules";

export type ProtocolName = "openai-chat" | "anthropic-messages" | "gemini" | "openai-responses";

/** A request as the engine plans it, whatever protocol it came in. */
export interface Normalized {
  model: string;
  /** OpenAI-shaped messages (system first): the directives, the seed and the token count read these. */
  messages: unknown[];
  /** OpenAI-shaped tools (`[{type, function: {name, parameters}}]`), for the token count and the tool name. */
  tools?: unknown[];
  /** Other request JSON the prompt count includes (tool_choice, response_format…). */
  extraCounted?: Json;
  stream: boolean;
  /** OpenAI: `stream_options.include_usage`; the other protocols always report usage. */
  includeUsage: boolean;
  /** Choices answered (`n`, Gemini's `candidateCount`) and generated (`best_of`). */
  answered: number;
  generated: number;
  /** The completion cap; OpenAI carriers read the field `[sim cap_field=…]` names (default max_completion_tokens, else max_tokens). */
  maxTokens(capField?: "max_tokens" | "max_completion_tokens"): number | undefined;
  reasoningBudget?: number;
  /** Whether the model thinks on this request, and whether its thinking is returned. */
  thinks: boolean | null; // null: the catalog decides (OpenAI)
  showsThinking: boolean;
  /** The model its signatures are bound to (its carrier verifies only its own: simulator/model-rules.ts); none: any model's verify. */
  signedBy?: string;
  /** The thinking is returned empty (Anthropic's `display: "omitted"`, the default of models that always think), still signed. */
  thinkingOmitted?: boolean;
  /** Cache breakpoints in prompt order (Anthropic `cache_control`): the prompt text up to and including each. */
  breakpoints: string[];
  /** The prompt's prefixes at each message boundary before the last message (implicit caches key on them): ./prompt-cache.ts. */
  implicitPrefixes: string[];
  /** OpenAI Responses: `include: ["reasoning.encrypted_content"]`, the reasoning comes back sealed. */
  sealsReasoning?: boolean;
  /**
   * The conversation ends with a tool's result, nothing after it (a loop's next turn): the model answers in text, whatever
   * the directives ask. User text after the result (in the same turn, for Anthropic and Gemini) is a new ask.
   */
  endsWithToolResult: boolean;
}

export type Refusal = { status: number; message: string };

/** One answer being written: what was asked and planned. */
export interface Exchange {
  directives: Directives;
  id: string;
  created: number;
  model: string;
  carrier: string;
  /** The choices answered, index 0 first; every completion generated and billed. */
  plans: CompletionPlan[];
  billed: CompletionPlan[];
  reasoningModel: boolean;
  showsThinking: boolean;
  /** Prompt tokens read from and written to the cache. */
  cache: { read: number; write: number };
  request: Normalized;
}

/** One stream event as written (its framing included); token events are the ones `tps` paces. */
export interface StreamEvent {
  text: string;
  token: boolean;
  /** The stream's usage-only event (OpenAI's usage chunk after the finish chunks): `usage_delay_ms` waits before it. */
  usage?: boolean;
}

export interface Wire {
  name: ProtocolName;
  /** The auth header this protocol's carriers check; null when it is present. */
  auth(req: IncomingMessage): Refusal | null;
  /** The request body as the engine's request, or why the carrier refuses it (400). */
  read(body: unknown, req: { model?: string; stream: boolean; headers: IncomingMessage["headers"]; rules?: ModelRules }): Normalized | Refusal;
  /** The protocol's error body; `refusal`: the carrier refuses the request itself (not a simulated fault). */
  errorBody(status: number, message: string, refusal?: boolean): string;
  answerJson(x: Exchange): string;
  streamEvents(x: Exchange): StreamEvent[];
  /** A stream event that is not JSON, for `[sim malformed]`. */
  malformedEvent(x: Exchange): StreamEvent;
  /** Whether this protocol reports cache writes (Anthropic). */
  reportsCacheWrites: boolean;
  /** Implicit caching's read granularity (OpenAI: 128-token steps; Gemini: the whole prefix = 1). */
  implicitStep: number | null;
}

/** A signature the simulated carrier gives to thinking (or a thought), and checks when it comes back: any change breaks it. */
export function sign(text: string): string {
  return createHash("sha256").update(`sim-signature\n${text}`).digest("base64");
}

/** The signature of thinking `text` from a model bound to `boundTo` (its own only), else from any model. */
export function signFor(text: string, boundTo?: string): string {
  return boundTo === undefined ? sign(text) : sign(`${boundTo}\n${text}`);
}

/** Usage counts shared by every protocol: prompt (incl. cache), completion (incl. reasoning), reasoning. */
export function counts(x: Exchange): { prompt: number; completion: number; reasoning: number } {
  return {
    prompt: x.plans[0]!.promptTokens,
    completion: x.billed.reduce((sum, p) => sum + p.completionTokens, 0),
    reasoning: x.reasoningModel ? x.billed.reduce((sum, p) => sum + p.reasoning.length, 0) : 0,
  };
}

/** The text of a plan's thinking, and its content. */
export function joined(words: readonly string[]): string {
  return words.join("");
}

/** `event:`-named SSE framing (Anthropic) and plain `data:` framing (OpenAI, Gemini). */
export const named = (type: string, json: Json, token = false): StreamEvent => ({ text: `event: ${type}\ndata: ${JSON.stringify(json)}\n\n`, token });
export const plain = (json: Json | string, token = false): StreamEvent => ({
  text: `data: ${typeof json === "string" ? json : JSON.stringify(json)}\n\n`,
  token,
});

/** Each message boundary's prefix of a prompt, but the whole (the texts joined up to each of the first n − 1). */
export function boundaryPrefixes(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (let k = 1; k < texts.length; k++) out.push(texts.slice(0, k).join("\n"));
  return out;
}
