import { ChunkStream, reasoningText, type Obj } from "../chunk-stream";
import type { ChunkFailure, StreamSummary } from "../caller-protocol";
import { withOrigin } from "./signature-origin";
import { anthropicUsage, messageId, stopReason } from "./answer";

type Block = { kind: "text" | "thinking" | "tool_use"; index: number; toolIndex?: number };

const event = (type: string, data: Obj): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * One caller's stream in Anthropic's events, rendered from canonical chat chunks: `message_start` and a
 * `ping` first; each text, thinking (with its `signature_delta`) and tool call a block of its own, opened
 * with `content_block_start` and closed with `content_block_stop` at its index before the next opens;
 * `message_delta` with the stop reason and the usage (input excluding the cache), then `message_stop` —
 * or an `error` event when the stream failed.
 */
export class MessagesStream extends ChunkStream {
  private started = false;
  private open: Block | null = null;
  private next = 0;
  /** Tool call index (in the chat chunks) → its block. */
  private readonly tools = new Map<number, Block>();

  keepalive(): string {
    return this.started ? event("ping", { type: "ping" }) : this.start();
  }

  end(failure: ChunkFailure | null, { usage: reported, finishReason, output }: StreamSummary): string {
    let out = this.start() + this.close();
    if (failure)
      return out + event("error", { type: "error", error: { type: failure.status === 529 ? "overloaded_error" : "api_error", message: failure.message } });
    const usage = reported
      ? anthropicUsage(reported)
      : { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output.completionTokens(0) };
    out += event("message_delta", { type: "message_delta", delta: { stop_reason: stopReason(finishReason), stop_sequence: null }, usage });
    const metadata = this.facts.metadata();
    return out + event("message_stop", metadata ? { type: "message_stop", openrouter_metadata: metadata } : { type: "message_stop" });
  }

  protected start(): string {
    if (this.started) return "";
    this.started = true;
    const message = {
      id: messageId(this.facts.genId),
      type: "message",
      role: "assistant",
      model: this.facts.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // The prompt's count comes with the carrier's usage, at the end (message_delta).
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    };
    return event("message_start", { type: "message_start", message }) + event("ping", { type: "ping" });
  }

  protected deltaEvents(delta: Obj): string {
    let out = "";
    const details = Array.isArray(delta.reasoning_details) ? (delta.reasoning_details as Obj[]) : [];
    const reasoning = reasoningText(delta);
    for (const d of details)
      if (d.type === "reasoning.encrypted" && typeof d.data === "string") {
        out += this.close();
        const index = this.next++;
        out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "redacted_thinking", data: withOrigin(d.data, d) } });
        out += event("content_block_stop", { type: "content_block_stop", index });
      }
    if (reasoning !== "")
      out +=
        this.ensure("thinking") +
        event("content_block_delta", { type: "content_block_delta", index: this.open!.index, delta: { type: "thinking_delta", thinking: reasoning } });
    for (const d of details)
      if (d.type === "reasoning.text" && typeof d.signature === "string" && d.signature !== "")
        out +=
          this.ensure("thinking") +
          event("content_block_delta", {
            type: "content_block_delta",
            index: this.open!.index,
            delta: { type: "signature_delta", signature: withOrigin(d.signature, d) },
          });
    if (typeof delta.content === "string" && delta.content !== "")
      out +=
        this.ensure("text") +
        event("content_block_delta", { type: "content_block_delta", index: this.open!.index, delta: { type: "text_delta", text: delta.content } });
    if (Array.isArray(delta.tool_calls))
      for (const call of delta.tool_calls as Obj[]) {
        const toolIndex = typeof call.index === "number" ? call.index : 0;
        const fn = (call.function ?? {}) as Obj;
        let block = this.tools.get(toolIndex);
        if (!block) {
          out += this.close();
          block = { kind: "tool_use", index: this.next++, toolIndex };
          this.tools.set(toolIndex, block);
          this.open = block;
          out += event("content_block_start", {
            type: "content_block_start",
            index: block.index,
            content_block: { type: "tool_use", id: call.id, name: fn.name, input: {} },
          });
        }
        if (typeof fn.arguments === "string" && fn.arguments !== "")
          out += event("content_block_delta", {
            type: "content_block_delta",
            index: block.index,
            delta: { type: "input_json_delta", partial_json: fn.arguments },
          });
      }
    return out;
  }

  /** The open block of this kind, opening it (and closing another) when needed. */
  private ensure(kind: "text" | "thinking"): string {
    if (this.open?.kind === kind) return "";
    let out = this.close();
    this.open = { kind, index: this.next++ };
    const block = kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" };
    out += event("content_block_start", { type: "content_block_start", index: this.open.index, content_block: block });
    return out;
  }

  private close(): string {
    if (!this.open) return "";
    const { index } = this.open;
    this.open = null;
    return event("content_block_stop", { type: "content_block_stop", index });
  }
}
