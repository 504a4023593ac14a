import type { PricedEndpoint } from "../catalog/catalog";
import { readUsage, type CarrierUsage } from "../request/usage";
import { OutputMeter } from "../request/token-estimate";
import { charge, type Charge } from "../request/charge";
import type { SseEvent } from "../http/sse-parser";
import type { ChunkFailure, ChunkJson, ReadChunk, Rendered, StreamRenderer, StreamSummary } from "../protocols/inbound/caller-protocol";

const FINISH = /"finish_reason":"([^"\\]*)"/g;
/** What an unparsed chunk gives its renderer: nothing but its text (one object for all, no allocation per chunk). */
const UNPARSED: ReadChunk = Object.freeze({ json: null, usage: undefined, shown: undefined });

/**
 * The accounting of one relayed stream, whatever the caller's protocol: the carrier's id and usage, the
 * cost that usage showed the caller, the finish, what was delivered (for the estimate when no usage
 * comes) and when the first token came. It reads every canonical chunk before the renderer does — once:
 * parsed, or (when the renderer rewrites the chunk's text as it is) scanned unparsed — and tells the
 * relay why the stream must end when a chunk is malformed or the carrier's error.
 */
export class StreamAccount implements StreamSummary {
  upstreamId: string | null = null;
  usage: CarrierUsage | undefined;
  /** What the last usage chunk told the caller it costs (insurance applied): the charge, whatever happens next. */
  shown: Charge | undefined;
  finishReason: string | null = null;
  /** Choices that sent a finish reason: the answer is whole once every choice has. */
  finished = 0;
  readonly output = new OutputMeter();
  firstTokenAt: number | null = null;

  constructor(
    private readonly endpoint: PricedEndpoint,
    /** The carrier's name, in the failures. */
    private readonly provider: string,
    /** The choices the caller's stream answers (StreamRenderer.choices): only those are counted. */
    private readonly choices: "all" | "first",
  ) {}

  /**
   * One canonical chunk read and counted: what the renderer needs of it, or why the stream must end.
   * `plain`: the chunk's text after the carrier's head, when its renderer rewrites it unparsed (an ordinary
   * chunk with no usage or error: its id is known from the first); only that text is scanned then.
   */
  read({ data, bytes }: SseEvent, plain: string | null): ReadChunk | ChunkFailure {
    if (plain !== null) {
      const before = this.output.delivered();
      this.output.addJson(plain, bytes - data.length);
      this.markFirstToken(before);
      FINISH.lastIndex = 0;
      for (let m = FINISH.exec(plain); m !== null; m = FINISH.exec(plain)) this.finish(m[1]!);
      return UNPARSED;
    }
    let json: ChunkJson;
    try {
      json = JSON.parse(data) as ChunkJson;
    } catch {
      return this.malformed();
    }
    if (typeof json !== "object" || json === null || Array.isArray(json)) return this.malformed();
    if (json.error !== undefined) return { status: 502, message: `Carrier ${this.provider} failed mid-stream: ${errorText(json.error)}` };
    if (typeof json.id === "string") this.upstreamId ??= json.id;
    if (Array.isArray(json.choices))
      for (const choice of json.choices as unknown[]) {
        if (!isObj(choice) || (this.choices === "first" && (choice.index ?? 0) !== 0)) continue;
        if (isObj(choice.delta)) {
          const before = this.output.delivered();
          this.output.addParsed(choice.delta);
          this.markFirstToken(before);
        }
        if (typeof choice.finish_reason === "string") this.finish(choice.finish_reason);
      }
    const usage = readUsage(json.usage);
    if (!usage) return { json, usage, shown: undefined };
    this.usage = usage;
    // The finish chunk comes before usage: the cost shown is the one charged, insurance included.
    this.shown = charge(usage, this.endpoint, this.finishReason, false);
    return { json, usage, shown: this.shown };
  }

  private finish(reason: string): void {
    this.finishReason = reason;
    this.finished++;
  }

  /** The first chunk that carried output marks the time of the first token. */
  private markFirstToken(deliveredBefore: number): void {
    if (this.firstTokenAt === null && this.output.delivered() > deliveredBefore) this.firstTokenAt = Date.now();
  }

  private malformed(): ChunkFailure {
    return { status: 502, message: `Carrier ${this.provider} sent a malformed stream chunk.` };
  }
}

/**
 * One canonical chunk through the account, then the renderer from its state: the caller's stream text and
 * the renderer's next state, or why the stream must end.
 */
export function renderChunk<S>(account: StreamAccount, renderer: StreamRenderer<S>, state: S, event: SseEvent): Rendered<S> | ChunkFailure {
  const read = account.read(event, renderer.plain === undefined ? null : renderer.plain(state, event.data));
  return "status" in read ? read : renderer.rewrite(state, event, read);
}

function isObj(v: unknown): v is ChunkJson {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message;
  return "unknown error";
}
