import type { PricedEndpoint } from "../../../catalog/catalog";
import { presentUsage } from "./usage";
import type { SseEvent } from "../../../http/sse-parser";
import type { AnswerFacts, ChunkFailure, ReadChunk, Rendered, StreamRenderer } from "../caller-protocol";

const DONE = "data: [DONE]\n\n";

type Chunk = Record<string, unknown> & { choices?: unknown; usage?: unknown };

/**
 * What the chat renderer knows between chunks: the carrier's chunk head once learnt (null until then, or
 * when its chunks have none usual), and ours that replaces it.
 */
export type ChatStreamState = { readonly upstreamHead: string | null; readonly ourHead: string };

const UNKNOWN_HEAD: ChatStreamState = Object.freeze({ upstreamHead: null, ourHead: "" });

/** Who the stream's chunks name, and what its last chunks need: for the whole stream, never changed. */
type Names = {
  genId: string;
  model: string;
  provider: string;
  endpoint: PricedEndpoint;
  /** When the stream started (unix s) and the routing metadata asked for, for its last chunks. */
  facts: Pick<AnswerFacts, "created" | "metadata">;
};

/**
 * Rewrites one carrier stream's chunks for the caller (generation id, requested model, carrier name;
 * `cost` added to usage); the stream's accounting is the relay's (src/relay/stream-account.ts), which
 * reads each chunk first. Carriers repeat the same `{"id":…,"object":…,"created":…,"model":…` head
 * (some add their own `"provider":…`) on every chunk: once it is known, ordinary chunks are rewritten by
 * swapping that head for ours, not by re-serializing them (`plain`) — unless the rest of the chunk also
 * names `provider`, which our head sets: then the chunk is parsed, so no key is ever sent twice.
 */
export function chunkRewriter(
  genId: string,
  model: string,
  provider: string,
  endpoint: PricedEndpoint,
  facts: Pick<AnswerFacts, "created" | "metadata"> = { created: 0, metadata: () => null },
): StreamRenderer<ChatStreamState> {
  const names: Names = { genId, model, provider, endpoint, facts };
  return {
    choices: "all",
    initial: UNKNOWN_HEAD,
    plain,
    rewrite: (state, event, chunk) => rewrite(names, state, event, chunk),
    end: (_state, failure) => end(names, failure),
  };
}

/**
 * The stream's last chunks: the routing metadata asked for (`openrouter_metadata`, in a chunk of its
 * own with no choices), then — when it failed — OpenRouter's error chunk (`error`, `finish_reason:
 * "error"`), then `data: [DONE]`.
 */
function end({ genId, model, provider, facts }: Names, failure: ChunkFailure | null): string {
  const metadata = facts.metadata();
  const head = { id: genId, object: "chat.completion.chunk", created: facts.created, model, provider };
  let out = metadata ? `data: ${JSON.stringify({ ...head, choices: [], openrouter_metadata: metadata })}\n\n` : "";
  if (failure)
    out += `data: ${JSON.stringify({ ...head, error: { code: failure.status, message: failure.message }, choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }] })}\n\n`;
  return out + DONE;
}

/** The chunk's text after the carrier's known head, when it needs nothing else rewritten (its head is swapped, unparsed); null otherwise. */
function plain({ upstreamHead: head }: ChatStreamState, data: string): string | null {
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

/**
 * The rewritten `data:` event for one carrier payload, as the account read it. A parsed chunk is the
 * renderer's to rewrite: the account parsed it for this call alone, and nothing reads it after.
 */
function rewrite(names: Names, state: ChatStreamState, { data }: SseEvent, { json, usage, shown }: ReadChunk): Rendered<ChatStreamState> {
  if (json === null) return { state, text: `data: ${state.ourHead}${data.slice(state.upstreamHead!.length)}\n\n` };
  const chunk = json as Chunk;
  const next = state.upstreamHead === null ? learnHead(names, state, data, chunk) : state;
  chunk.id = names.genId;
  chunk.model = names.model;
  chunk.provider = names.provider;
  if (chunk.system_fingerprint === null) delete chunk.system_fingerprint; // the contract types it as a string
  if (Array.isArray(chunk.choices))
    for (const choice of chunk.choices as unknown[])
      if (typeof choice === "object" && choice !== null && (choice as Record<string, unknown>).finish_reason === undefined)
        (choice as Record<string, unknown>).finish_reason = null; // required (nullable) by the contract
  if (usage && shown) chunk.usage = presentUsage(chunk.usage, usage, shown, names.endpoint.outputNano);
  return { state: next, text: `data: ${JSON.stringify(chunk)}\n\n` };
}

/**
 * The carrier's chunk head when it is the usual id/object/created/model sequence, with the carrier's own
 * provider field when it follows at once (the swap then replaces it); the state unchanged otherwise.
 */
function learnHead(names: Names, state: ChatStreamState, data: string, chunk: Chunk): ChatStreamState {
  const { id, object, created, model, provider } = chunk;
  if (typeof id !== "string" || typeof object !== "string" || typeof created !== "number" || typeof model !== "string") return state;
  let head = `{"id":${JSON.stringify(id)},"object":${JSON.stringify(object)},"created":${created},"model":${JSON.stringify(model)}`;
  if (provider !== undefined) head += `,"provider":${JSON.stringify(provider)}`;
  if (!data.startsWith(head) || data.charAt(head.length) !== ",") return state;
  return {
    upstreamHead: head,
    ourHead: `{"id":${JSON.stringify(names.genId)},"object":${JSON.stringify(object)},"created":${created},"model":${JSON.stringify(names.model)},"provider":${JSON.stringify(names.provider)}`,
  };
}
