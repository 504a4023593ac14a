import { appendDetails, chainedDetails, firstChoiceText, joinDetails, reasoningText, type Obj } from "../chunk-stream";
import type { AnswerFacts, ChunkFailure, ReadChunk, Rendered, StreamRenderer, StreamSummary } from "../caller-protocol";
import type { SseEvent } from "../../../http/sse-parser";
import { describesText, itemId, reasoningItem, responseObject, responsesUsage, statusOf } from "./answer";
import { PendingSeals, requireSealer, sealingStep } from "./reasoning-envelope";
import { streamError } from "./errors";
import { close, inProgressItem, reasoningDelta, textDelta, toolDelta } from "./stream-items";
import { draftOf, emit, INITIAL, type Draft, type ResponsesState, type StreamContext } from "./stream-state";

export type { ResponsesState } from "./stream-state";

/**
 * One caller's stream in OpenAI's Responses events, rendered from canonical chat chunks, with nothing
 * but the documented event kinds (Codex refuses others) and a rising `sequence_number`:
 * `response.created`, `response.in_progress`; per output item `response.output_item.added` … `.done`
 * (./stream-items.ts) — a reasoning item's summary (`response.reasoning_summary_part.added`,
 * `response.reasoning_summary_text.delta`/`.done`, `response.reasoning_summary_part.done`) or its raw
 * text (`response.content_part.added`, `response.reasoning_text.delta`/`.done`,
 * `response.content_part.done`), a message's text part (`response.content_part.added`,
 * `response.output_text.delta`/`.done`, `response.content_part.done`), a function call's arguments
 * (`response.function_call_arguments.delta`/`.done`, with its `namespace` when it has one) or a custom
 * tool's input (`response.custom_tool_call_input.delta`/`.done`: ./tools.ts); then `response.completed` (or
 * `response.incomplete` when cut by the token cap) with the whole response and its usage, or
 * `response.failed` when the stream failed. Reasoning asked for sealed (`include`) leaves here as
 * placeholders; `asyncStep` seals them on the way out.
 */
export function responsesStream(facts: AnswerFacts): StreamRenderer<ResponsesState> {
  const seals = facts.echo.include_encrypted_reasoning === true ? new PendingSeals() : null;
  const ctx: StreamContext = { facts, seals };
  return {
    choices: "first",
    initial: INITIAL,
    rewrite: (state, event, chunk) => rewrite(ctx, state, event, chunk),
    end: (state, failure, summary) => end(ctx, state, failure, summary),
    ...(seals ? { asyncStep: sealingStep(seals, requireSealer(facts.sealer)) } : {}),
  };
}

function rewrite(ctx: StreamContext, state: ResponsesState, _event: SseEvent, { json }: ReadChunk): Rendered<ResponsesState> {
  const draft = draftOf(state);
  return { text: firstChoiceText(ctx, draft, json, start, deltaEvents), state: draft };
}

function start({ facts }: StreamContext, d: Draft): string {
  if (d.started) return "";
  d.started = true;
  const response = responseObject(facts, { status: "in_progress", output: [], usage: null, completedAt: null });
  return emit(d, "response.created", { response }) + emit(d, "response.in_progress", { response });
}

function deltaEvents(ctx: StreamContext, d: Draft, delta: Obj): string {
  let out = "";
  const details = Array.isArray(delta.reasoning_details) ? (delta.reasoning_details as Obj[]) : [];
  const reasoning = reasoningText(delta);
  if (reasoning !== "" || details.length) {
    // Reasoning goes in the open reasoning item, or opens the first item; after other output only its details are kept.
    if (d.open?.kind === "reasoning" || (d.open === null && d.items.length === 0)) out += reasoningDelta(ctx, d, reasoning, details, !describesText(details));
    else d.late = appendDetails(d.late, details);
  }
  if (typeof delta.content === "string" && delta.content !== "") out += textDelta(ctx, d, delta.content);
  if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as Obj[]) out += toolDelta(ctx, d, call);
  return out;
}

function end(ctx: StreamContext, state: ResponsesState, failure: ChunkFailure | null, summary: StreamSummary): string {
  const { facts, seals } = ctx;
  const d = draftOf(state);
  let out = start(ctx, d);
  if (failure) {
    const error = streamError(failure);
    const output = d.open ? [...d.items, inProgressItem(d.open)] : d.items;
    const response = responseObject(facts, { status: "failed", error, output, usage: usageObject(summary), completedAt: null });
    return out + emit(d, "response.failed", { response });
  }
  out += close(ctx, d);
  if (d.late !== null && seals) {
    const index = d.items.length;
    const item = reasoningItem(itemId("rs", facts.genId, index), "", joinDetails(chainedDetails(d.late)), seals);
    d.items = [...d.items, item];
    out += emit(d, "response.output_item.added", { output_index: index, item: reasoningItem(item.id as string, "", [], null, "in_progress") });
    out += emit(d, "response.output_item.done", { output_index: index, item });
  }
  const { status, incomplete_details } = statusOf(summary.finishReason);
  const response = responseObject(facts, {
    status,
    incomplete_details,
    output: d.items,
    usage: usageObject(summary),
    completedAt: Math.floor(Date.now() / 1000),
  });
  return out + emit(d, status === "completed" ? "response.completed" : "response.incomplete", { response });
}

/** The Responses usage: the carrier's, else the estimate of what was delivered. */
function usageObject({ usage, output }: StreamSummary): Obj {
  return responsesUsage(
    usage ?? {
      promptTokens: 0,
      completionTokens: output.completionTokens(0),
      reasoningTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
    },
  );
}
