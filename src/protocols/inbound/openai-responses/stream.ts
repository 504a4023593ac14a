import { ChunkStream, joinDetails, reasoningText, type Obj } from "../chunk-stream";
import type { AnswerFacts, ChunkFailure, StreamSummary } from "../caller-protocol";
import { describesText, functionCallItem, itemId, messageItem, outputText, reasoningItem, responseObject, responsesUsage, statusOf } from "./answer";
import { PendingSeals, requireSealer, sealingStep } from "./reasoning-envelope";
import { streamError } from "./errors";
import { callerCallItem, customInput, echoedToolNames, type ToolOrigin } from "./tools";

/** The item being streamed: its kind, position, id and what it has gathered. */
type Open =
  | { kind: "reasoning"; index: number; id: string; text: string; details: Obj[]; raw: boolean }
  | { kind: "message"; index: number; id: string; text: string }
  | { kind: "function_call"; index: number; id: string; toolIndex: number; callId: string; origin: ToolOrigin; args: string };

/**
 * One caller's stream in OpenAI's Responses events, rendered from canonical chat chunks, with nothing
 * but the documented event kinds (Codex refuses others) and a rising `sequence_number`:
 * `response.created`, `response.in_progress`; per output item `response.output_item.added` … `.done`
 * — a reasoning item's summary (`response.reasoning_summary_part.added`,
 * `response.reasoning_summary_text.delta`/`.done`, `response.reasoning_summary_part.done`) or its raw
 * text (`response.content_part.added`, `response.reasoning_text.delta`/`.done`,
 * `response.content_part.done`: `reasoningDelta`), a message's
 * text part (`response.content_part.added`, `response.output_text.delta`/`.done`,
 * `response.content_part.done`), a function call's arguments
 * (`response.function_call_arguments.delta`/`.done`, with its `namespace` when it has one) or a custom
 * tool's input (`response.custom_tool_call_input.delta`/`.done`: ./tools.ts); then `response.completed` (or
 * `response.incomplete` when cut by the token cap) with the whole response and its usage, or
 * `response.failed` when the stream failed. Reasoning asked for sealed (`include`) leaves here as
 * placeholders; `asyncStep` seals them on the way out.
 */
export class ResponsesStream extends ChunkStream {
  private seq = 0;
  private started = false;
  private open: Open | null = null;
  private readonly items: Obj[] = [];
  /** Reasoning details that came when no reasoning item could take them (after other output): one more reasoning item at the end. */
  private readonly late: Obj[] = [];

  /** The details to seal, when asked for; null otherwise. */
  private readonly seals: PendingSeals | null;
  readonly asyncStep?: TransformStream<Uint8Array, Uint8Array>;

  constructor(facts: AnswerFacts) {
    super(facts);
    this.seals = facts.echo.include_encrypted_reasoning === true ? new PendingSeals() : null;
    if (this.seals) this.asyncStep = sealingStep(this.seals, requireSealer(facts.sealer));
  }

  private event(type: string, data: Obj): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...data })}\n\n`;
  }

  protected start(): string {
    if (this.started) return "";
    this.started = true;
    const response = responseObject(this.facts, { status: "in_progress", output: [], usage: null, completedAt: null });
    return this.event("response.created", { response }) + this.event("response.in_progress", { response });
  }

  protected deltaEvents(delta: Obj): string {
    let out = "";
    const details = Array.isArray(delta.reasoning_details) ? (delta.reasoning_details as Obj[]) : [];
    const reasoning = reasoningText(delta);
    if (reasoning !== "" || details.length) {
      if (this.open?.kind === "reasoning" || this.items.length === 0) {
        out += this.openReasoning();
        const open = this.open as Extract<Open, { kind: "reasoning" }>;
        open.details.push(...details);
        if (reasoning !== "") out += this.reasoningDelta(open, reasoning, !describesText(details));
      } else this.late.push(...details); // reasoning text after other output has no item to go in: only its details are kept
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      if (this.open?.kind !== "message") {
        out += this.close();
        const open: Open = { kind: "message", index: this.items.length, id: itemId("msg", this.facts.genId, this.items.length), text: "" };
        this.items.push(messageItem(open.id, "", "in_progress"));
        this.open = open;
        out += this.event("response.output_item.added", { output_index: open.index, item: messageItem(open.id, "", "in_progress") });
        out += this.event("response.content_part.added", { ...this.at(open), content_index: 0, part: outputText("") });
      }
      const open = this.open as Extract<Open, { kind: "message" }>;
      open.text += delta.content;
      out += this.event("response.output_text.delta", { ...this.at(open), content_index: 0, delta: delta.content, logprobs: [] });
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as Obj[]) out += this.toolDelta(call);
    return out;
  }

  private toolDelta(call: Obj): string {
    let out = "";
    const toolIndex = typeof call.index === "number" ? call.index : 0;
    const fn = (call.function ?? {}) as Obj;
    if (this.open?.kind !== "function_call" || this.open.toolIndex !== toolIndex) {
      out += this.close();
      const index = this.items.length;
      const open: Open = {
        kind: "function_call",
        index,
        id: itemId("fc", this.facts.genId, index),
        toolIndex,
        callId: typeof call.id === "string" ? call.id : itemId("fc", this.facts.genId, index),
        // The caller's tool the carrier's name stands for (./tools.ts): a namespaced function or a custom tool.
        origin: this.toolOrigin(typeof fn.name === "string" ? fn.name : ""),
        args: "",
      };
      this.items.push(callerCallItem(open.id, open.callId, open.origin, "", "in_progress"));
      this.open = open;
      out += this.event("response.output_item.added", { output_index: index, item: callerCallItem(open.id, open.callId, open.origin, "", "in_progress") });
    }
    const open = this.open as Extract<Open, { kind: "function_call" }>;
    if (typeof fn.arguments === "string" && fn.arguments !== "") {
      open.args += fn.arguments;
      // A custom tool's input is inside the carrier's JSON arguments: it is given whole when the call closes.
      if (open.origin.kind === "function") out += this.event("response.function_call_arguments.delta", { ...this.at(open), delta: fn.arguments });
    }
    return out;
  }

  end(failure: ChunkFailure | null, summary: StreamSummary): string {
    let out = this.start();
    if (failure) {
      const error = streamError(failure);
      const response = responseObject(this.facts, { status: "failed", error, output: this.items, usage: usageObject(summary), completedAt: null });
      return out + this.event("response.failed", { response });
    }
    out += this.close();
    if (this.late.length && this.seals) {
      const index = this.items.length;
      const item = reasoningItem(itemId("rs", this.facts.genId, index), "", joinDetails(this.late), this.seals);
      this.items.push(item);
      out += this.event("response.output_item.added", { output_index: index, item: reasoningItem(item.id as string, "", [], null, "in_progress") });
      out += this.event("response.output_item.done", { output_index: index, item });
    }
    const { status, incomplete_details } = statusOf(summary.finishReason);
    const response = responseObject(this.facts, {
      status,
      incomplete_details,
      output: this.items,
      usage: usageObject(summary),
      completedAt: Math.floor(Date.now() / 1000),
    });
    return out + this.event(status === "completed" ? "response.completed" : "response.incomplete", { response });
  }

  private toolOrigin(carrierName: string): ToolOrigin {
    return echoedToolNames(this.facts.echo)?.origin(carrierName) ?? { kind: "function", name: carrierName };
  }

  private openReasoning(): string {
    if (this.open?.kind === "reasoning") return "";
    const index = this.items.length;
    const open: Open = { kind: "reasoning", index, id: itemId("rs", this.facts.genId, index), text: "", details: [], raw: false };
    this.items.push(reasoningItem(open.id, "", [], null, "in_progress"));
    this.open = open;
    return this.event("response.output_item.added", { output_index: index, item: reasoningItem(open.id, "", [], null, "in_progress") });
  }

  /**
   * Reasoning text into the open reasoning item. Its first text decides what the item holds: bare text
   * (the model's raw reasoning) streams as its `reasoning_text` content part (`response.content_part.added`,
   * `response.reasoning_text.delta`); text the carrier described with details streams as its summary
   * (`response.reasoning_summary_part.added`, `response.reasoning_summary_text.delta`). See `reasoningItem`.
   */
  private reasoningDelta(open: Extract<Open, { kind: "reasoning" }>, text: string, bare: boolean): string {
    let out = "";
    if (open.text === "") {
      open.raw = bare;
      out += open.raw
        ? this.event("response.content_part.added", { ...this.at(open), content_index: 0, part: { type: "reasoning_text", text: "" } })
        : this.event("response.reasoning_summary_part.added", { ...this.at(open), summary_index: 0, part: { type: "summary_text", text: "" } });
    }
    open.text += text;
    return (
      out +
      (open.raw
        ? this.event("response.reasoning_text.delta", { ...this.at(open), content_index: 0, delta: text })
        : this.event("response.reasoning_summary_text.delta", { ...this.at(open), summary_index: 0, delta: text }))
    );
  }

  private at(open: Open): Obj {
    return { item_id: open.id, output_index: open.index };
  }

  /** Closes the open item: its closing events, and the item in its final form. */
  private close(): string {
    const open = this.open;
    if (!open) return "";
    this.open = null;
    let out = "";
    let item: Obj;
    if (open.kind === "reasoning") {
      if (open.text !== "" && open.raw) {
        out += this.event("response.reasoning_text.done", { ...this.at(open), content_index: 0, text: open.text });
        out += this.event("response.content_part.done", { ...this.at(open), content_index: 0, part: { type: "reasoning_text", text: open.text } });
      } else if (open.text !== "") {
        out += this.event("response.reasoning_summary_text.done", { ...this.at(open), summary_index: 0, text: open.text });
        out += this.event("response.reasoning_summary_part.done", { ...this.at(open), summary_index: 0, part: { type: "summary_text", text: open.text } });
      }
      item = reasoningItem(open.id, open.text, joinDetails(open.details), this.seals, "completed", open.raw);
    } else if (open.kind === "message") {
      out += this.event("response.output_text.done", { ...this.at(open), content_index: 0, text: open.text, logprobs: [] });
      out += this.event("response.content_part.done", { ...this.at(open), content_index: 0, part: outputText(open.text) });
      item = messageItem(open.id, open.text);
    } else if (open.origin.kind === "custom") {
      const input = customInput(open.args);
      if (input !== "") out += this.event("response.custom_tool_call_input.delta", { ...this.at(open), delta: input });
      out += this.event("response.custom_tool_call_input.done", { ...this.at(open), input });
      item = callerCallItem(open.id, open.callId, open.origin, open.args);
    } else {
      out += this.event("response.function_call_arguments.done", { ...this.at(open), name: open.origin.name, arguments: open.args });
      item = callerCallItem(open.id, open.callId, open.origin, open.args);
    }
    this.items[open.index] = item;
    return out + this.event("response.output_item.done", { output_index: open.index, item });
  }
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
