import type { PricedEndpoint } from "../../../catalog/catalog";
import { presentUsage } from "./usage";
import { readUsage, type CarrierUsage } from "../../../request/usage";
import { OutputMeter } from "../../../request/token-estimate";
import { charge, type Charge } from "../../../request/charge";
import type { SseEvent } from "../../../http/sse-parser";
import type { AnswerFacts, ChunkFailure, StreamRenderer } from "../caller-protocol";

const DONE = "data: [DONE]\n\n";

type Chunk = Record<string, unknown> & { choices?: unknown; usage?: unknown; error?: unknown };
export type { ChunkFailure };

const FINISH = /"finish_reason":"([^"\\]*)"/g;

/**
 * Rewrites one carrier stream's chunks for the caller (generation id, requested model, carrier name;
 * `cost` added to usage) and keeps the stream's accounting (usage, finish reason, delivered output).
 * Carriers repeat the same `{"id":…,"object":…,"created":…,"model":…` head (some add their own
 * `"provider":…`) on every chunk: once it is known, ordinary chunks are rewritten by swapping that head
 * for ours, not by re-serializing them — unless the rest of the chunk also names `provider`, which our
 * head sets: then the chunk is parsed, so no key is ever sent twice.
 */
export class ChunkRewriter implements StreamRenderer {
  upstreamId: string | null = null;
  usage: CarrierUsage | undefined;
  /** What the last usage chunk told the caller it costs (insurance applied): the charge, whatever happens next. */
  shown: Charge | undefined;
  finishReason: string | null = null;
  /** Choices that sent a finish reason: the answer is whole once every choice has. */
  finished = 0;
  /** What was delivered, for the estimate when the carrier reports no usage. */
  readonly output = new OutputMeter();
  firstTokenAt: number | null = null;
  private upstreamHead: string | null = null;
  private ourHead = "";

  constructor(
    private readonly genId: string,
    private readonly model: string,
    private readonly provider: string,
    private readonly endpoint: PricedEndpoint,
    /** When the stream started (unix s) and the routing metadata asked for, for its last chunks. */
    private readonly facts: Pick<AnswerFacts, "created" | "metadata"> = { created: 0, metadata: () => null },
  ) {}

  /**
   * The stream's last chunks: the routing metadata asked for (`openrouter_metadata`, in a chunk of its
   * own with no choices), then — when it failed — OpenRouter's error chunk (`error`, `finish_reason:
   * "error"`), then `data: [DONE]`.
   */
  end(failure: ChunkFailure | null): string {
    const { created } = this.facts;
    const metadata = this.facts.metadata();
    const head = { id: this.genId, object: "chat.completion.chunk", created, model: this.model, provider: this.provider };
    let out = metadata ? `data: ${JSON.stringify({ ...head, choices: [], openrouter_metadata: metadata })}\n\n` : "";
    if (failure)
      out += `data: ${JSON.stringify({ ...head, error: { code: failure.status, message: failure.message }, choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }] })}\n\n`;
    return out + DONE;
  }

  /** The rewritten `data:` event for one carrier payload, or why the stream must end. */
  rewrite({ data, bytes }: SseEvent): string | ChunkFailure {
    const head = this.upstreamHead;
    if (head !== null && data.startsWith(head) && data.endsWith("}")) {
      const rest = data.slice(head.length);
      // Chunks the contract would reject as sent (no finish_reason, a null system_fingerprint) are parsed and mended.
      if (
        !rest.includes('"usage"') &&
        !rest.includes('"error"') &&
        !rest.includes('"provider"') &&
        rest.includes('"finish_reason"') &&
        !rest.includes('"system_fingerprint":null')
      ) {
        const before = this.output.delivered();
        this.output.addJson(rest, bytes - data.length);
        this.markFirstToken(before);
        FINISH.lastIndex = 0;
        for (let m = FINISH.exec(rest); m !== null; m = FINISH.exec(rest)) {
          this.finishReason = m[1]!;
          this.finished++;
        }
        return `data: ${this.ourHead}${rest}\n\n`;
      }
    }
    return this.rewriteParsed(data);
  }

  private rewriteParsed(data: string): string | ChunkFailure {
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      return { status: 502, message: `Carrier ${this.provider} sent a malformed stream chunk.` };
    }
    if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk))
      return { status: 502, message: `Carrier ${this.provider} sent a malformed stream chunk.` };
    if (chunk.error !== undefined) return { status: 502, message: `Carrier ${this.provider} failed mid-stream: ${errorText(chunk.error)}` };
    if (this.upstreamHead === null) this.learnHead(data, chunk);
    if (typeof chunk.id === "string") this.upstreamId ??= chunk.id;
    chunk.id = this.genId;
    chunk.model = this.model;
    chunk.provider = this.provider;
    if (chunk.system_fingerprint === null) delete chunk.system_fingerprint; // the contract types it as a string
    if (Array.isArray(chunk.choices)) {
      for (const choice of chunk.choices as unknown[]) {
        if (typeof choice !== "object" || choice === null) continue;
        const { delta, finish_reason } = choice as Record<string, unknown>;
        if (finish_reason === undefined) (choice as Record<string, unknown>).finish_reason = null; // required (nullable) by the contract
        if (typeof delta === "object" && delta !== null && !Array.isArray(delta)) {
          const before = this.output.delivered();
          this.output.addParsed(delta as Record<string, unknown>);
          this.markFirstToken(before);
        }
        if (typeof finish_reason === "string") {
          this.finishReason = finish_reason;
          this.finished++;
        }
      }
    }
    const reported = readUsage(chunk.usage);
    if (reported) {
      this.usage = reported;
      // The finish chunk comes before usage: the cost shown is the one charged, insurance included.
      this.shown = charge(reported, this.endpoint, this.finishReason, false);
      chunk.usage = presentUsage(chunk.usage, reported, this.shown, this.endpoint.outputNano);
    }
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  /**
   * Remembers the carrier's chunk head when it is the usual id/object/created/model sequence, with the
   * carrier's own provider field when it follows at once (the swap then replaces it).
   */
  private learnHead(data: string, chunk: Chunk): void {
    const { id, object, created, model, provider } = chunk;
    if (typeof id !== "string" || typeof object !== "string" || typeof created !== "number" || typeof model !== "string") return;
    let head = `{"id":${JSON.stringify(id)},"object":${JSON.stringify(object)},"created":${created},"model":${JSON.stringify(model)}`;
    if (provider !== undefined) head += `,"provider":${JSON.stringify(provider)}`;
    if (!data.startsWith(head) || data.charAt(head.length) !== ",") return;
    this.upstreamHead = head;
    this.ourHead = `{"id":${JSON.stringify(this.genId)},"object":${JSON.stringify(object)},"created":${created},"model":${JSON.stringify(this.model)},"provider":${JSON.stringify(this.provider)}`;
  }

  /** The first chunk that carried output marks the time of the first token. */
  private markFirstToken(deliveredBefore: number): void {
    if (this.firstTokenAt === null && this.output.delivered() > deliveredBefore) this.firstTokenAt = Date.now();
  }
}

function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message;
  return "unknown error";
}
