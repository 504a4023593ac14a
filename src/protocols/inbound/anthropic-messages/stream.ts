import { firstChoiceText, reasoningText, type Obj } from "../chunk-stream";
import type { AnswerFacts, ChunkFailure, ReadChunk, Rendered, StreamRenderer, StreamSummary } from "../caller-protocol";
import type { SseEvent } from "../../../http/sse-parser";
import { withOrigin } from "./signature-origin";
import { anthropicUsage, messageId, stopReason } from "./answer";

type Block = { readonly kind: "text" | "thinking" | "tool_use"; readonly index: number };

/** What the Messages renderer knows between chunks: whether it opened the message, its open block, the next block's index, the tool calls' blocks. */
export type MessagesState = {
  readonly started: boolean;
  readonly open: Block | null;
  readonly next: number;
  /** Tool call index (in the chat chunks) → its block; a new map only when a call begins. */
  readonly tools: ReadonlyMap<number, Block>;
};

/** The next state, built while one call renders (a fresh copy: the state it came from is never changed). */
type Draft = { -readonly [K in keyof MessagesState]: MessagesState[K] };

/** A field-by-field copy: cheaper than a spread on the hot path (one per chunk). */
const draftOf = (s: MessagesState): Draft => ({ started: s.started, open: s.open, next: s.next, tools: s.tools });

const INITIAL: MessagesState = Object.freeze({ started: false, open: null, next: 0, tools: new Map<number, Block>() });

const event = (type: string, data: Obj): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * One caller's stream in Anthropic's events, rendered from canonical chat chunks: `message_start` and a
 * `ping` first; each text, thinking (with its `signature_delta`) and tool call a block of its own, opened
 * with `content_block_start` and closed with `content_block_stop` at its index before the next opens;
 * `message_delta` with the stop reason and the usage (input excluding the cache), then `message_stop` —
 * or an `error` event when the stream failed.
 */
export function messagesStream(facts: AnswerFacts): StreamRenderer<MessagesState> {
  return {
    choices: "first",
    initial: INITIAL,
    rewrite: (state, event, chunk) => rewrite(facts, state, event, chunk),
    keepalive: (state) => keepalive(facts, state),
    end: (state, failure, summary) => end(facts, state, failure, summary),
  };
}

function rewrite(facts: AnswerFacts, state: MessagesState, _event: SseEvent, { json }: ReadChunk): Rendered<MessagesState> {
  const draft = draftOf(state);
  return { text: firstChoiceText(facts, draft, json, start, deltaEvents), state: draft };
}

function keepalive(facts: AnswerFacts, state: MessagesState): Rendered<MessagesState> {
  if (state.started) return { state, text: event("ping", { type: "ping" }) };
  const draft = draftOf(state);
  return { text: start(facts, draft), state: draft };
}

function end(facts: AnswerFacts, state: MessagesState, failure: ChunkFailure | null, { usage: reported, finishReason, output }: StreamSummary): string {
  const draft = draftOf(state);
  let out = start(facts, draft) + close(draft);
  if (failure)
    return out + event("error", { type: "error", error: { type: failure.status === 529 ? "overloaded_error" : "api_error", message: failure.message } });
  const usage = reported
    ? anthropicUsage(reported)
    : { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output.completionTokens(0) };
  out += event("message_delta", { type: "message_delta", delta: { stop_reason: stopReason(finishReason), stop_sequence: null }, usage });
  const metadata = facts.metadata();
  return out + event("message_stop", metadata ? { type: "message_stop", openrouter_metadata: metadata } : { type: "message_stop" });
}

function start(facts: AnswerFacts, d: Draft): string {
  if (d.started) return "";
  d.started = true;
  const message = {
    id: messageId(facts.genId),
    type: "message",
    role: "assistant",
    model: facts.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    // The prompt's count comes with the carrier's usage, at the end (message_delta).
    usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
  };
  return event("message_start", { type: "message_start", message }) + event("ping", { type: "ping" });
}

function deltaEvents(_facts: AnswerFacts, d: Draft, delta: Obj): string {
  let out = "";
  const details = Array.isArray(delta.reasoning_details) ? (delta.reasoning_details as Obj[]) : [];
  const reasoning = reasoningText(delta);
  for (const detail of details)
    if (detail.type === "reasoning.encrypted" && typeof detail.data === "string") {
      out += close(d);
      const index = d.next++;
      out += event("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "redacted_thinking", data: withOrigin(detail.data, detail) },
      });
      out += event("content_block_stop", { type: "content_block_stop", index });
    }
  if (reasoning !== "")
    out +=
      ensure(d, "thinking") +
      event("content_block_delta", { type: "content_block_delta", index: d.open!.index, delta: { type: "thinking_delta", thinking: reasoning } });
  for (const detail of details)
    if (detail.type === "reasoning.text" && typeof detail.signature === "string" && detail.signature !== "")
      out +=
        ensure(d, "thinking") +
        event("content_block_delta", {
          type: "content_block_delta",
          index: d.open!.index,
          delta: { type: "signature_delta", signature: withOrigin(detail.signature, detail) },
        });
  if (typeof delta.content === "string" && delta.content !== "")
    out +=
      ensure(d, "text") +
      event("content_block_delta", { type: "content_block_delta", index: d.open!.index, delta: { type: "text_delta", text: delta.content } });
  if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as Obj[]) out += toolDelta(d, call);
  return out;
}

/** One tool call fragment: its block opened (closing another) when the call begins, its arguments as `input_json_delta`. */
function toolDelta(d: Draft, call: Obj): string {
  let out = "";
  const toolIndex = typeof call.index === "number" ? call.index : 0;
  const fn = (call.function ?? {}) as Obj;
  let block = d.tools.get(toolIndex);
  if (!block) {
    out += close(d);
    block = { kind: "tool_use", index: d.next++ };
    d.tools = new Map(d.tools).set(toolIndex, block);
    d.open = block;
    out += event("content_block_start", {
      type: "content_block_start",
      index: block.index,
      content_block: { type: "tool_use", id: call.id, name: fn.name, input: {} },
    });
  }
  if (typeof fn.arguments === "string" && fn.arguments !== "")
    out += event("content_block_delta", { type: "content_block_delta", index: block.index, delta: { type: "input_json_delta", partial_json: fn.arguments } });
  return out;
}

/** The open block of this kind, opening it (and closing another) when needed. */
function ensure(d: Draft, kind: "text" | "thinking"): string {
  if (d.open?.kind === kind) return "";
  let out = close(d);
  d.open = { kind, index: d.next++ };
  const block = kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" };
  out += event("content_block_start", { type: "content_block_start", index: d.open.index, content_block: block });
  return out;
}

function close(d: Draft): string {
  if (!d.open) return "";
  const { index } = d.open;
  d.open = null;
  return event("content_block_stop", { type: "content_block_stop", index });
}
