import type { PricedEndpoint } from "../catalog/catalog";
import { costNano, nanoToUsd } from "../catalog/money";
import { readUsage, type CarrierUsage } from "./usage";

type Chunk = Record<string, unknown> & { choices?: unknown; usage?: unknown; error?: unknown };
export type ChunkFailure = { status: number; message: string };

const CONTENT = /"(?:content|reasoning)":"(?!")/;
const FINISH = /"finish_reason":"([^"\\]*)"/;

/**
 * Rewrites one carrier stream's chunks for the caller (generation id, requested model, carrier name;
 * `cost` added to usage) and keeps the stream's accounting (usage, finish reason, delivered tokens).
 * Carriers repeat the same `{"id":…,"object":…,"created":…,"model":…` head on every chunk: once it is
 * known, ordinary content chunks are rewritten by swapping that head, not by re-serializing them.
 */
export class ChunkRewriter {
  upstreamId: string | null = null;
  usage: CarrierUsage | undefined;
  finishReason: string | null = null;
  deliveredTokens = 0;
  firstTokenAt: number | null = null;
  private upstreamHead: string | null = null;
  private ourHead = "";

  constructor(
    private readonly genId: string,
    private readonly model: string,
    private readonly provider: string,
    private readonly endpoint: PricedEndpoint,
  ) {}

  /** The rewritten `data:` event for one carrier payload, or why the stream must end. */
  rewrite(data: string): string | ChunkFailure {
    const head = this.upstreamHead;
    if (head !== null && data.startsWith(head) && data.endsWith("}") && !data.includes('"usage"') && !data.includes('"error"')) {
      const rest = data.slice(head.length);
      if (CONTENT.test(rest)) this.delivered();
      const finish = FINISH.exec(rest);
      if (finish) this.finishReason = finish[1]!;
      return `data: ${this.ourHead}${rest}\n\n`;
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
    if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk)) return { status: 502, message: `Carrier ${this.provider} sent a malformed stream chunk.` };
    if (chunk.error !== undefined) return { status: 502, message: `Carrier ${this.provider} failed mid-stream: ${errorText(chunk.error)}` };
    if (this.upstreamHead === null) this.learnHead(data, chunk);
    if (typeof chunk.id === "string") this.upstreamId ??= chunk.id;
    chunk.id = this.genId;
    chunk.model = this.model;
    chunk.provider = this.provider;
    if (Array.isArray(chunk.choices)) {
      for (const choice of chunk.choices as Array<Record<string, unknown>>) {
        const delta = choice.delta as Record<string, unknown> | undefined;
        if (delta && ((typeof delta.content === "string" && delta.content !== "") || (typeof delta.reasoning === "string" && delta.reasoning !== ""))) this.delivered();
        if (typeof choice.finish_reason === "string") this.finishReason = choice.finish_reason;
      }
    }
    const reported = readUsage(chunk.usage);
    if (reported) {
      this.usage = reported;
      chunk.usage = { ...(chunk.usage as object), cost: nanoToUsd(costNano(reported.promptTokens, reported.completionTokens, this.endpoint)) };
    }
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  /** Remembers the carrier's chunk head when it is the usual id/object/created/model sequence. */
  private learnHead(data: string, chunk: Chunk): void {
    const { id, object, created, model } = chunk;
    if (typeof id !== "string" || typeof object !== "string" || typeof created !== "number" || typeof model !== "string") return;
    const head = `{"id":${JSON.stringify(id)},"object":${JSON.stringify(object)},"created":${created},"model":${JSON.stringify(model)}`;
    if (!data.startsWith(head) || data.charAt(head.length) !== ",") return;
    this.upstreamHead = head;
    this.ourHead = `{"id":${JSON.stringify(this.genId)},"object":${JSON.stringify(object)},"created":${created},"model":${JSON.stringify(this.model)},"provider":${JSON.stringify(this.provider)}`;
  }

  private delivered(): void {
    this.deliveredTokens++;
    this.firstTokenAt ??= Date.now();
  }
}

function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message;
  return "unknown error";
}
