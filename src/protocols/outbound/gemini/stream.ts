import type { SseEvent } from "../../../http/sse-parser";
import { utf8Bytes } from "../../../request/token-estimate";
import { candidateMessage, canonicalUsage, finishReason } from "./answer";

type Obj = Record<string, unknown>;

const DONE: SseEvent = { data: "[DONE]", bytes: 6 };

/**
 * Decodes one Gemini stream (`streamGenerateContent?alt=sse`: each event a partial
 * `GenerateContentResponse`) into canonical chat chunks with one head: each candidate's text, thoughts,
 * function calls (whole, one delta each) and thought signatures as deltas; its finish reason; and once
 * every candidate has finished, the usage chunk (from the last `usageMetadata`: Gemini repeats the running
 * totals, never added up) and `[DONE]`. An `error` event becomes an error chunk.
 */
export class GeminiStreamDecoder {
  private head: string | null = null;
  private usage: Obj | undefined;
  private finished = 0;
  private done = false;
  /** Tool calls so far, per candidate (their delta indexes). */
  private readonly calls = new Map<number, number>();
  private responseId = "gemini";

  constructor(
    /** Candidates the request asked for (`n`): the stream is whole when each has finished. */
    private readonly candidates: number,
    private readonly excludeReasoning = false,
  ) {}

  decode = (event: SseEvent): SseEvent[] => {
    let r: Obj;
    try {
      r = JSON.parse(event.data) as Obj;
    } catch {
      return [event]; // not JSON: the renderer refuses it as a malformed chunk
    }
    if (typeof r !== "object" || r === null || Array.isArray(r)) return [event];
    if (this.head === null) {
      if (typeof r.responseId === "string") this.responseId = r.responseId;
      const model = typeof r.modelVersion === "string" ? r.modelVersion : "";
      this.head = `{"id":${JSON.stringify(this.responseId)},"object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(model)}`;
    }
    if (typeof r.error === "object" && r.error !== null) {
      const e = r.error as Obj;
      return [this.event(`${this.head},"error":${JSON.stringify({ message: `${String(e.status ?? "ERROR")}: ${String(e.message ?? "")}`, code: 502 })}}`)];
    }
    const usage = canonicalUsage(r.usageMetadata);
    if (usage) this.usage = usage;
    const out: SseEvent[] = [];
    const candidates = Array.isArray(r.candidates) ? (r.candidates as Obj[]) : [];
    candidates.forEach((c, position) => {
      const index = typeof c.index === "number" ? c.index : position;
      const content = typeof c.content === "object" && c.content !== null ? (c.content as Obj) : {};
      const parts = Array.isArray(content.parts) ? (content.parts as Obj[]) : [];
      const first = this.calls.get(index) ?? 0;
      const m = candidateMessage(parts, this.responseId, index, first, this.excludeReasoning);
      this.calls.set(index, first + m.toolCalls.length);
      const delta: Obj = {};
      if (m.content !== "") delta.content = m.content;
      if (m.reasoning !== "") delta.reasoning = m.reasoning;
      if (m.details.length) delta.reasoning_details = m.details;
      if (m.toolCalls.length) delta.tool_calls = m.toolCalls;
      if (Object.keys(delta).length) out.push(this.chunk(index, JSON.stringify(delta), null));
      const finish = finishReason(c.finishReason, first + m.toolCalls.length > 0);
      if (finish !== null) {
        out.push(this.chunk(index, "{}", finish));
        this.finished++;
      }
    });
    if (!candidates.length && typeof r.promptFeedback === "object" && r.promptFeedback !== null && (r.promptFeedback as Obj).blockReason !== undefined) {
      out.push(this.chunk(0, "{}", "content_filter"));
      this.finished = this.candidates;
    }
    if (!this.done && this.finished >= this.candidates && this.usage) {
      this.done = true;
      out.push(this.event(`${this.head},"choices":[],"usage":${JSON.stringify(this.usage)}}`), DONE);
    }
    return out;
  };

  private chunk(index: number, delta: string, finish: string | null): SseEvent {
    return this.event(`${this.head},"choices":[{"index":${index},"delta":${delta},"finish_reason":${finish === null ? "null" : JSON.stringify(finish)}}]}`);
  }

  private event(data: string): SseEvent {
    return { data, bytes: utf8Bytes(data) };
  }
}
