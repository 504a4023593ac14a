import { appendDetails, chainedDetails, joinDetails, type Obj } from "../chunk-stream";
import { itemId, messageItem, outputText, reasoningItem } from "./answer";
import { callerCallItem, customInput, echoedToolNames, type ToolOrigin } from "./tools";
import { at, emit, type Draft, type Open, type StreamContext } from "./stream-state";

// The output items of a Responses stream, one open at a time: each opened with `response.output_item.added`,
// its parts streamed, and closed with its `.done` events before the next opens (./stream.ts).

/**
 * Reasoning into the open reasoning item (opened when none is). Its first text decides what the item
 * holds: bare text (the model's raw reasoning) streams as its `reasoning_text` content part
 * (`response.content_part.added`, `response.reasoning_text.delta`); text the carrier described with
 * details streams as its summary (`response.reasoning_summary_part.added`,
 * `response.reasoning_summary_text.delta`). See `reasoningItem`.
 */
export function reasoningDelta(ctx: StreamContext, d: Draft, text: string, details: Obj[], bare: boolean): string {
  let out = "";
  if (d.open?.kind !== "reasoning") {
    const index = d.items.length;
    d.open = { kind: "reasoning", index, id: itemId("rs", ctx.facts.genId, index), text: "", details: null, raw: false };
    out += emit(d, "response.output_item.added", { output_index: index, item: inProgressItem(d.open) });
  }
  const open = d.open;
  const raw = open.text === "" ? bare : open.raw;
  if (text !== "" && open.text === "")
    out += raw
      ? emit(d, "response.content_part.added", { ...at(open), content_index: 0, part: { type: "reasoning_text", text: "" } })
      : emit(d, "response.reasoning_summary_part.added", { ...at(open), summary_index: 0, part: { type: "summary_text", text: "" } });
  // Field by field, not spread: this runs once per chunk.
  d.open = {
    kind: "reasoning",
    index: open.index,
    id: open.id,
    text: open.text + text,
    details: appendDetails(open.details, details),
    raw: text !== "" ? raw : open.raw,
  };
  if (text === "") return out;
  return (
    out +
    (raw
      ? emit(d, "response.reasoning_text.delta", { ...at(open), content_index: 0, delta: text })
      : emit(d, "response.reasoning_summary_text.delta", { ...at(open), summary_index: 0, delta: text }))
  );
}

/** Text into the open message item (opened, closing another, when none is): `response.output_text.delta`. */
export function textDelta(ctx: StreamContext, d: Draft, text: string): string {
  let out = "";
  if (d.open?.kind !== "message") {
    out += close(ctx, d);
    const index = d.items.length;
    d.open = { kind: "message", index, id: itemId("msg", ctx.facts.genId, index), text: "" };
    out += emit(d, "response.output_item.added", { output_index: index, item: inProgressItem(d.open) });
    out += emit(d, "response.content_part.added", { ...at(d.open), content_index: 0, part: outputText("") });
  }
  const open = d.open;
  d.open = { kind: "message", index: open.index, id: open.id, text: open.text + text };
  return out + emit(d, "response.output_text.delta", { ...at(open), content_index: 0, delta: text, logprobs: [] });
}

/**
 * A tool call fragment into its function call item (opened, closing another, when the call begins): its
 * arguments as `response.function_call_arguments.delta` — a custom tool's input is inside the carrier's
 * JSON arguments: it is given whole when the call closes.
 */
export function toolDelta(ctx: StreamContext, d: Draft, call: Obj): string {
  let out = "";
  const toolIndex = typeof call.index === "number" ? call.index : 0;
  const fn = (call.function ?? {}) as Obj;
  if (d.open?.kind !== "function_call" || d.open.toolIndex !== toolIndex) {
    out += close(ctx, d);
    const index = d.items.length;
    const id = itemId("fc", ctx.facts.genId, index);
    // The caller's tool the carrier's name stands for (./tools.ts): a namespaced function or a custom tool.
    const origin = toolOrigin(ctx, typeof fn.name === "string" ? fn.name : "");
    d.open = { kind: "function_call", index, id, toolIndex, callId: typeof call.id === "string" ? call.id : id, origin, args: "" };
    out += emit(d, "response.output_item.added", { output_index: index, item: inProgressItem(d.open) });
  }
  const open = d.open;
  if (typeof fn.arguments !== "string" || fn.arguments === "") return out;
  const { index, id, callId, origin } = open;
  d.open = { kind: "function_call", index, id, toolIndex, callId, origin, args: open.args + fn.arguments };
  if (open.origin.kind === "function") out += emit(d, "response.function_call_arguments.delta", { ...at(open), delta: fn.arguments });
  return out;
}

/** Closes the open item: its closing events, and the item in its final form among the items. */
export function close(ctx: StreamContext, d: Draft): string {
  const open = d.open;
  if (!open) return "";
  d.open = null;
  let out = "";
  let item: Obj;
  if (open.kind === "reasoning") {
    if (open.text !== "" && open.raw) {
      out += emit(d, "response.reasoning_text.done", { ...at(open), content_index: 0, text: open.text });
      out += emit(d, "response.content_part.done", { ...at(open), content_index: 0, part: { type: "reasoning_text", text: open.text } });
    } else if (open.text !== "") {
      out += emit(d, "response.reasoning_summary_text.done", { ...at(open), summary_index: 0, text: open.text });
      out += emit(d, "response.reasoning_summary_part.done", { ...at(open), summary_index: 0, part: { type: "summary_text", text: open.text } });
    }
    item = reasoningItem(open.id, open.text, joinDetails(chainedDetails(open.details)), ctx.seals, "completed", open.raw);
  } else if (open.kind === "message") {
    out += emit(d, "response.output_text.done", { ...at(open), content_index: 0, text: open.text, logprobs: [] });
    out += emit(d, "response.content_part.done", { ...at(open), content_index: 0, part: outputText(open.text) });
    item = messageItem(open.id, open.text);
  } else if (open.origin.kind === "custom") {
    const input = customInput(open.args);
    if (input !== "") out += emit(d, "response.custom_tool_call_input.delta", { ...at(open), delta: input });
    out += emit(d, "response.custom_tool_call_input.done", { ...at(open), input });
    item = callerCallItem(open.id, open.callId, open.origin, open.args);
  } else {
    out += emit(d, "response.function_call_arguments.done", { ...at(open), name: open.origin.name, arguments: open.args });
    item = callerCallItem(open.id, open.callId, open.origin, open.args);
  }
  d.items = [...d.items, item];
  return out + emit(d, "response.output_item.done", { output_index: open.index, item });
}

/** An item as it is while open (in `response.output_item.added`, and in the output of a failed stream). */
export function inProgressItem(open: Open): Obj {
  if (open.kind === "reasoning") return reasoningItem(open.id, "", [], null, "in_progress");
  if (open.kind === "message") return messageItem(open.id, "", "in_progress");
  return callerCallItem(open.id, open.callId, open.origin, "", "in_progress");
}

function toolOrigin(ctx: StreamContext, carrierName: string): ToolOrigin {
  return echoedToolNames(ctx.facts.echo)?.origin(carrierName) ?? { kind: "function", name: carrierName };
}
