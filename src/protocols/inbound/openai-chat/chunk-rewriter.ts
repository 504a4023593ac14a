import type { PricedEndpoint } from "../../../catalog/catalog";
import { presentUsage } from "./usage";
import type { SseEvent } from "../../../http/sse-parser";
import type { AnswerFacts, ChunkFailure, ReadChunk, StreamRenderer } from "../caller-protocol";

const DONE = "data: [DONE]\n\n";

type Chunk = Record<string, unknown> & { choices?: unknown; usage?: unknown };

/**
 * Rewrites one carrier stream's chunks for the caller (generation id, requested model, carrier name;
 * `cost` added to usage); the stream's accounting is the relay's (src/relay/stream-account.ts), which
 * reads each chunk first. Carriers repeat the same `{"id":…,"object":…,"created":…,"model":…` head
 * (some add their own `"provider":…`) on every chunk: once it is known, ordinary chunks are rewritten by
 * swapping that head for ours, not by re-serializing them (`plain`) — unless the rest of the chunk also
 * names `provider`, which our head sets: then the chunk is parsed, so no key is ever sent twice.
 */
export class ChunkRewriter implements StreamRenderer {
  readonly choices = "all";
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

  /** The chunk's text after the carrier's known head, when it needs nothing else rewritten (its head is swapped, unparsed); null otherwise. */
  plain(data: string): string | null {
    const head = this.upstreamHead;
    if (head === null || !data.startsWith(head) || !data.endsWith("}")) return null;
    const rest = data.slice(head.length);
    // Chunks the contract would reject as sent (no finish_reason, a null system_fingerprint) are parsed and mended.
    return !rest.includes('"usage"') &&
      !rest.includes('"error"') &&
      !rest.includes('"provider"') &&
      rest.includes('"finish_reason"') &&
      !rest.includes('"system_fingerprint":null')
      ? rest
      : null;
  }

  /** The rewritten `data:` event for one carrier payload, as the account read it. */
  rewrite({ data }: SseEvent, { json, usage, shown }: ReadChunk): string {
    if (json === null) return `data: ${this.ourHead}${data.slice(this.upstreamHead!.length)}\n\n`;
    const chunk = json as Chunk;
    if (this.upstreamHead === null) this.learnHead(data, chunk);
    chunk.id = this.genId;
    chunk.model = this.model;
    chunk.provider = this.provider;
    if (chunk.system_fingerprint === null) delete chunk.system_fingerprint; // the contract types it as a string
    if (Array.isArray(chunk.choices))
      for (const choice of chunk.choices as unknown[])
        if (typeof choice === "object" && choice !== null && (choice as Record<string, unknown>).finish_reason === undefined)
          (choice as Record<string, unknown>).finish_reason = null; // required (nullable) by the contract
    if (usage && shown) chunk.usage = presentUsage(chunk.usage, usage, shown, this.endpoint.outputNano);
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
}
