import type { SseEvent } from "../../http/sse-parser";
import type { AnswerFacts, ChunkFailure, ReadChunk, StreamRenderer, StreamSummary } from "./caller-protocol";

export type { Obj } from "./request-checks";
import type { Obj } from "./request-checks";

/**
 * A caller stream in a protocol other than chat, rendered from canonical chat chunks: each delta of the
 * first choice goes to the protocol's renderer — those protocols answer one choice. The stream's
 * accounting is the relay's (src/relay/stream-account.ts): `end` is given what it knows.
 */
export abstract class ChunkStream implements StreamRenderer {
  readonly choices = "first";

  constructor(protected readonly facts: AnswerFacts) {}

  /** The stream's opening events (once; "" after). */
  protected abstract start(): string;
  /** The events of one delta of the first choice. */
  protected abstract deltaEvents(delta: Obj): string;
  abstract end(failure: ChunkFailure | null, summary: StreamSummary): string;

  rewrite(_event: SseEvent, { json }: ReadChunk): string {
    let out = this.start();
    const choices = json?.choices;
    for (const choice of Array.isArray(choices) ? (choices as unknown[]) : []) {
      if (typeof choice !== "object" || choice === null || ((choice as Obj).index ?? 0) !== 0) continue;
      out += this.deltaEvents(((choice as Obj).delta ?? {}) as Obj);
    }
    return out;
  }
}

/** A delta's reasoning text, whichever field the carrier used. */
export function reasoningText(delta: Obj): string {
  return typeof delta.reasoning === "string" ? delta.reasoning : typeof delta.reasoning_content === "string" ? delta.reasoning_content : "";
}

/**
 * Streamed `reasoning_details` fragments joined into whole details: fragments of one `index` are one
 * detail, their `text` concatenated and any other field (signature, data, format) as last sent.
 */
export function joinDetails(fragments: Obj[]): Obj[] {
  const byIndex = new Map<unknown, Obj>();
  const out: Obj[] = [];
  for (const f of fragments) {
    const key = typeof f.index === "number" ? f.index : Symbol();
    const seen = byIndex.get(key);
    if (!seen || seen.type !== f.type) {
      const whole = { ...f };
      byIndex.set(key, whole);
      out.push(whole);
      continue;
    }
    for (const [k, v] of Object.entries(f)) {
      if (k === "text" && typeof v === "string") seen.text = (typeof seen.text === "string" ? seen.text : "") + v;
      else if (v !== undefined && v !== null && v !== "") seen[k] = v;
    }
  }
  return out;
}
