import type { PricedEndpoint } from "../../catalog/catalog";
import { readUsage, type CarrierUsage } from "../../request/usage";
import { OutputMeter } from "../../request/token-estimate";
import { charge, type Charge } from "../../request/charge";
import type { SseEvent } from "../../http/sse-parser";
import type { AnswerFacts, ChunkFailure, StreamRenderer } from "./caller-protocol";

export type { Obj } from "./request-checks";
import type { Obj } from "./request-checks";

/**
 * A caller stream in a protocol other than chat, rendered from canonical chat chunks: this keeps the
 * stream's accounting (what was delivered, the carrier's usage and the cost it shows, the finish) and
 * hands each delta of the first choice to the protocol's renderer — those protocols answer one choice.
 */
export abstract class ChunkStream implements StreamRenderer {
  upstreamId: string | null = null;
  usage: CarrierUsage | undefined;
  shown: Charge | undefined;
  finishReason: string | null = null;
  finished = 0;
  readonly output = new OutputMeter();
  firstTokenAt: number | null = null;

  constructor(
    protected readonly facts: AnswerFacts,
    private readonly endpoint: PricedEndpoint,
  ) {}

  /** The stream's opening events (once; "" after). */
  protected abstract start(): string;
  /** The events of one delta of the first choice. */
  protected abstract deltaEvents(delta: Obj): string;
  abstract end(failure: ChunkFailure | null): string;

  rewrite({ data }: SseEvent): string | ChunkFailure {
    let chunk: Obj;
    try {
      chunk = JSON.parse(data) as Obj;
    } catch {
      return this.malformed();
    }
    if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk)) return this.malformed();
    if (chunk.error !== undefined) return { status: 502, message: `Carrier ${this.facts.provider} failed mid-stream: ${errorText(chunk.error)}` };
    if (typeof chunk.id === "string") this.upstreamId ??= chunk.id;
    let out = this.start();
    for (const choice of Array.isArray(chunk.choices) ? (chunk.choices as Obj[]) : []) {
      if ((choice.index ?? 0) !== 0) continue;
      const delta = (choice.delta ?? {}) as Obj;
      const before = this.output.delivered();
      this.output.addParsed(delta);
      if (this.firstTokenAt === null && this.output.delivered() > before) this.firstTokenAt = Date.now();
      out += this.deltaEvents(delta);
      if (typeof choice.finish_reason === "string") {
        this.finishReason = choice.finish_reason;
        this.finished++;
      }
    }
    const reported = readUsage(chunk.usage);
    if (reported) {
      this.usage = reported;
      this.shown = charge(reported, this.endpoint, this.finishReason, false);
    }
    return out;
  }

  private malformed(): ChunkFailure {
    return { status: 502, message: `Carrier ${this.facts.provider} sent a malformed stream chunk.` };
  }
}

/** A delta's reasoning text, whichever field the carrier used. */
export function reasoningText(delta: Obj): string {
  return typeof delta.reasoning === "string" ? delta.reasoning : typeof delta.reasoning_content === "string" ? delta.reasoning_content : "";
}

function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message;
  return "unknown error";
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
