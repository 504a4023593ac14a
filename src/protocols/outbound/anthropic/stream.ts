import type { SseEvent } from "../../../http/sse-parser";
import { utf8Bytes } from "../../../request/token-estimate";
import { ANTHROPIC_REASONING_FORMAT } from "./thinking";
import { canonicalUsage, finishReason, readAnthropicUsage, type AnthropicUsage } from "./answer";

type Obj = Record<string, unknown>;

const DONE: SseEvent = { data: "[DONE]", bytes: 6 };
/** A text delta as Anthropic sends it, for the fast path that copies its JSON string without parsing the event. */
const TEXT_DELTA = /^\{"type":"content_block_delta","index":\d+,"delta":\{"type":"text_delta","text":("(?:[^"\\]|\\.)*")\}\}$/s;

/**
 * Decodes one Anthropic Messages stream into canonical chat chunks. Every event kind: `message_start`
 * (id, model, prompt usage; a role chunk), `content_block_start` (a tool call's id and name; redacted
 * thinking), `content_block_delta` (`text_delta` → content, `input_json_delta` → the tool call's
 * arguments, `thinking_delta` → reasoning, `signature_delta` → the signature in `reasoning_details`),
 * `content_block_stop`, `message_delta` (the finish reason; output usage), `message_stop` (the usage
 * chunk, then `[DONE]`), `ping`, and `error` (an error chunk, which ends the caller's stream as failed).
 * Every chunk has the same head, so the caller's renderer takes its fast path.
 */
export class AnthropicStreamDecoder {
  /** Every chunk's head; message_start gives the real id and model (it always comes first). */
  private head = '{"id":"","object":"chat.completion.chunk","created":0,"model":""';
  private readonly usage: AnthropicUsage = { input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0 };
  private sawUsage = false;
  private thinkingBytes = 0;
  /** Block index → the tool call's index among this answer's tool calls. */
  private readonly toolIndex = new Map<number, number>();
  private tools = 0;
  private details = 0;
  /** The model message_start names: the signer of this answer's thinking (./thinking.ts). */
  private signedBy: { signed_by?: string } = {};

  /** `excludeReasoning` (`reasoning.exclude`): thinking is billed (its bytes estimate the reasoning tokens) but not relayed. */
  constructor(private readonly excludeReasoning = false) {}

  decode = (event: SseEvent): SseEvent[] => {
    const fast = TEXT_DELTA.exec(event.data);
    if (fast) return [this.chunk(`{"content":${fast[1]}}`)];
    let e: Obj;
    try {
      e = JSON.parse(event.data) as Obj;
    } catch {
      return [event]; // not JSON: the renderer refuses it as a malformed chunk
    }
    if (typeof e !== "object" || e === null) return [event];
    switch (e.type) {
      case "message_start": {
        const m = (e.message ?? {}) as Obj;
        const created = Math.floor(Date.now() / 1000);
        if (typeof m.model === "string" && m.model !== "") this.signedBy = { signed_by: m.model };
        this.head = `{"id":${JSON.stringify(String(m.id ?? ""))},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(String(m.model ?? ""))}`;
        if (m.usage !== undefined) {
          readAnthropicUsage(m.usage, this.usage);
          this.sawUsage = true;
        }
        return [this.chunk(`{"role":"assistant","content":""}`)];
      }
      case "content_block_start":
        return this.blockStart(e.index, (e.content_block ?? {}) as Obj);
      case "content_block_delta":
        return this.blockDelta(e.index, (e.delta ?? {}) as Obj);
      case "message_delta": {
        if (e.usage !== undefined) {
          readAnthropicUsage(e.usage, this.usage);
          this.sawUsage = true;
        }
        const delta = (e.delta ?? {}) as Obj;
        const finish = finishReason(delta.stop_reason);
        return finish === null ? [] : [this.chunk("{}", finish)];
      }
      case "message_stop":
        return this.sawUsage ? [this.usageChunk(), DONE] : [DONE];
      case "error": {
        const error = (e.error ?? {}) as Obj;
        const message = `${String(error.type ?? "error")}: ${String(error.message ?? "")}`;
        return [this.event(`${this.head},"error":${JSON.stringify({ message, code: 502 })}}`)];
      }
      default:
        return []; // ping, content_block_stop, and event kinds added later
    }
  };

  private blockStart(index: unknown, block: Obj): SseEvent[] {
    if (block.type === "tool_use") {
      const i = this.tools++;
      this.toolIndex.set(Number(index), i);
      return [this.chunk(JSON.stringify({ tool_calls: [{ index: i, id: block.id, type: "function", function: { name: block.name, arguments: "" } }] }))];
    }
    if (block.type === "redacted_thinking" && !this.excludeReasoning)
      return [
        this.chunk(
          JSON.stringify({
            reasoning_details: [{ type: "reasoning.encrypted", data: block.data, format: ANTHROPIC_REASONING_FORMAT, index: this.details++, ...this.signedBy }],
          }),
        ),
      ];
    if (block.type === "thinking") this.details++;
    if (block.type === "text" && typeof block.text === "string" && block.text !== "") return [this.chunk(JSON.stringify({ content: block.text }))];
    return [];
  }

  private blockDelta(index: unknown, delta: Obj): SseEvent[] {
    switch (delta.type) {
      case "text_delta":
        return [this.chunk(JSON.stringify({ content: delta.text }))];
      case "input_json_delta": {
        const i = this.toolIndex.get(Number(index)) ?? 0;
        return [this.chunk(JSON.stringify({ tool_calls: [{ index: i, function: { arguments: delta.partial_json } }] }))];
      }
      case "thinking_delta": {
        const text = typeof delta.thinking === "string" ? delta.thinking : "";
        this.thinkingBytes += utf8Bytes(text);
        if (this.excludeReasoning) return [];
        const detail = { type: "reasoning.text", text, format: ANTHROPIC_REASONING_FORMAT, index: this.details - 1 };
        return [this.chunk(JSON.stringify({ reasoning: text, reasoning_details: [detail] }))];
      }
      case "signature_delta": {
        if (this.excludeReasoning) return [];
        const detail = {
          type: "reasoning.text",
          text: "",
          signature: delta.signature,
          format: ANTHROPIC_REASONING_FORMAT,
          index: this.details - 1,
          ...this.signedBy,
        };
        return [this.chunk(JSON.stringify({ reasoning_details: [detail] }))];
      }
      default:
        return [];
    }
  }

  private chunk(delta: string, finish: string | null = null): SseEvent {
    return this.event(`${this.head},"choices":[{"index":0,"delta":${delta},"finish_reason":${finish === null ? "null" : JSON.stringify(finish)}}]}`);
  }

  private usageChunk(): SseEvent {
    return this.event(`${this.head},"choices":[],"usage":${JSON.stringify(canonicalUsage(this.usage, this.thinkingBytes))}}`);
  }

  private event(data: string): SseEvent {
    return { data, bytes: utf8Bytes(data) };
  }
}
