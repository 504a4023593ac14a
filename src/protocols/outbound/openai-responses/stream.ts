import type { SseEvent } from "../../../http/sse-parser";
import { utf8Bytes } from "../../../request/token-estimate";
import { OPENAI_RESPONSES_REASONING_FORMAT } from "./request";
import { canonicalUsage, finishReason } from "./answer";

type Obj = Record<string, unknown>;

const DONE: SseEvent = { data: "[DONE]", bytes: 6 };

/**
 * Decodes one OpenAI Responses stream into canonical chat chunks with one head. The events mapped:
 * `response.created` (id, model; a role chunk), `response.output_item.added` (a function call's id and
 * name), `response.output_text.delta` → content, `response.refusal.delta` → refusal,
 * `response.function_call_arguments.delta` → the call's arguments (`.done` only when no delta came),
 * `response.reasoning_summary_text.delta` and `response.reasoning_text.delta` → reasoning,
 * `response.output_item.done` of a reasoning item → its sealed content in `reasoning_details`,
 * `response.completed` / `response.incomplete` → the finish chunk, the usage chunk and `[DONE]`,
 * `response.failed` and `error` → an error chunk (the caller's stream ends as failed). The others
 * (`in_progress`, part and item bookkeeping, `*.done` repeats of the deltas) carry nothing new. What it
 * keeps is bounded by the stream's items (its size is bounded by the relay: RELAY_MAX_STREAM_BYTES).
 */
export class ResponsesStreamDecoder {
  private head = '{"id":"","object":"chat.completion.chunk","created":0,"model":""';
  /** Output index of a function call → its index among this answer's tool calls. */
  private readonly toolIndex = new Map<number, number>();
  /** Function calls whose arguments came as deltas (the others get them from `.done`). */
  private readonly streamedArgs = new Set<number>();
  /** A reasoning item's piece (its output index and kind: summary, text, sealed) → its index in `reasoning_details`. */
  private readonly detailIndex = new Map<string, number>();
  private details = 0;
  private finished = false;

  /** `excludeReasoning` (`reasoning.exclude`): reasoning is billed (the carrier counts it) but not relayed. */
  constructor(private readonly excludeReasoning = false) {}

  decode = (event: SseEvent): SseEvent[] => {
    let e: Obj;
    try {
      e = JSON.parse(event.data) as Obj;
    } catch {
      return [event]; // not JSON: the renderer refuses it as a malformed chunk
    }
    if (typeof e !== "object" || e === null || Array.isArray(e)) return [event];
    const at = typeof e.output_index === "number" ? e.output_index : -1;
    switch (e.type) {
      case "response.created": {
        const r = (e.response ?? {}) as Obj;
        const created = typeof r.created_at === "number" ? r.created_at : Math.floor(Date.now() / 1000);
        this.head = `{"id":${JSON.stringify(String(r.id ?? ""))},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(String(r.model ?? ""))}`;
        return [this.chunk(`{"role":"assistant","content":""}`)];
      }
      case "response.output_item.added": {
        const item = (e.item ?? {}) as Obj;
        if (item.type !== "function_call") return [];
        const i = this.toolIndex.size;
        this.toolIndex.set(at, i);
        return [this.chunk(JSON.stringify({ tool_calls: [{ index: i, id: item.call_id, type: "function", function: { name: item.name, arguments: "" } }] }))];
      }
      case "response.output_text.delta":
        return typeof e.delta === "string" && e.delta !== "" ? [this.chunk(JSON.stringify({ content: e.delta }))] : [];
      case "response.refusal.delta":
        return typeof e.delta === "string" && e.delta !== "" ? [this.chunk(JSON.stringify({ refusal: e.delta }))] : [];
      case "response.function_call_arguments.delta": {
        if (typeof e.delta !== "string" || !this.toolIndex.has(at)) return [];
        this.streamedArgs.add(at);
        return [this.chunk(JSON.stringify({ tool_calls: [{ index: this.toolIndex.get(at), function: { arguments: e.delta } }] }))];
      }
      case "response.function_call_arguments.done": {
        if (typeof e.arguments !== "string" || e.arguments === "" || !this.toolIndex.has(at) || this.streamedArgs.has(at)) return [];
        this.streamedArgs.add(at);
        return [this.chunk(JSON.stringify({ tool_calls: [{ index: this.toolIndex.get(at), function: { arguments: e.arguments } }] }))];
      }
      case "response.reasoning_summary_text.delta":
        return this.reasoning(at, e.item_id, e.delta, "summary");
      case "response.reasoning_text.delta":
        return this.reasoning(at, e.item_id, e.delta, "text");
      case "response.output_item.done": {
        const item = (e.item ?? {}) as Obj;
        if (item.type !== "reasoning" || typeof item.encrypted_content !== "string" || item.encrypted_content === "" || this.excludeReasoning) return [];
        const detail = {
          type: "reasoning.encrypted",
          data: item.encrypted_content,
          id: item.id,
          format: OPENAI_RESPONSES_REASONING_FORMAT,
          index: this.indexOf(at, "encrypted"),
        };
        return [this.chunk(JSON.stringify({ reasoning_details: [detail] }))];
      }
      case "response.completed":
      case "response.incomplete": {
        if (this.finished) return [];
        this.finished = true;
        const r = (e.response ?? {}) as Obj;
        const finish = finishReason(r.status ?? (e.type === "response.incomplete" ? "incomplete" : "completed"), r.incomplete_details, this.toolIndex.size > 0);
        const usage = canonicalUsage(r.usage);
        const out = [this.chunk("{}", finish)];
        if (usage) out.push(this.event(`${this.head},"choices":[],"usage":${JSON.stringify(usage)}}`));
        out.push(DONE);
        return out;
      }
      case "response.failed": {
        const error = (((e.response ?? {}) as Obj).error ?? {}) as Obj;
        return [this.error(error.code, error.message)];
      }
      case "error":
        return [this.error(e.code, e.message)];
      default:
        return [];
    }
  };

  private reasoning(at: number, itemId: unknown, delta: unknown, kind: "summary" | "text"): SseEvent[] {
    if (typeof delta !== "string" || delta === "" || this.excludeReasoning) return [];
    const index = this.indexOf(at, kind);
    const id = typeof itemId === "string" ? itemId : undefined;
    const detail =
      kind === "summary"
        ? { type: "reasoning.summary", summary: delta, id, format: OPENAI_RESPONSES_REASONING_FORMAT, index }
        : { type: "reasoning.text", text: delta, id, format: OPENAI_RESPONSES_REASONING_FORMAT, index };
    return [this.chunk(JSON.stringify({ reasoning: delta, reasoning_details: [detail] }))];
  }

  /** The `reasoning_details` index of one kind of a reasoning item's pieces: its deltas merge into one detail. */
  private indexOf(at: number, kind: "summary" | "text" | "encrypted"): number {
    const key = `${at} ${kind}`;
    let i = this.detailIndex.get(key);
    if (i === undefined) this.detailIndex.set(key, (i = this.details++));
    return i;
  }

  private error(code: unknown, message: unknown): SseEvent {
    return this.event(`${this.head},"error":${JSON.stringify({ message: `${String(code ?? "error")}: ${String(message ?? "")}`, code: 502 })}}`);
  }

  private chunk(delta: string, finish: string | null = null): SseEvent {
    return this.event(`${this.head},"choices":[{"index":0,"delta":${delta},"finish_reason":${finish === null ? "null" : JSON.stringify(finish)}}]}`);
  }

  private event(data: string): SseEvent {
    return { data, bytes: utf8Bytes(data) };
  }
}
