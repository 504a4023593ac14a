import type { CanonicalAnswer } from "../request/answer";

/**
 * One cached answer (docs/caching.md): the canonical answer the carrier gave (`answer`, a whole answer) or
 * its canonical stream chunks (`events`, each an SSE `data:` payload, [DONE] left out), with its usage set
 * to zero — a replay is served free, and shows the caller so — and what its record names: the generation
 * that stored it, the model as the caller named it, the endpoint that served it (`modelId` at `provider`).
 * Rendered again through the caller's protocol on every hit, so one entry serves every inbound API. An
 * embeddings answer keeps its vectors (`vectors`), rendered again in the encoding the request asks.
 */
export type CacheEntry = {
  v: 1;
  sourceId: string;
  model: string;
  modelId: string;
  provider: string;
  finishReason: string | null;
  upstreamId: string | null;
  createdAt: number;
  expiresAt: number;
} & Kept;

/** What an entry keeps of the answer: a whole canonical answer, a stream's canonical chunks, or embeddings' vectors. */
export type Kept = { answer: CanonicalAnswer } | { events: string[] } | { vectors: number[][] };

/** Usage of nothing, in OpenAI's shape: what a replayed answer reports and is charged for. */
export const ZERO_USAGE = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/** An entry as stored: JSON, gzip-compressed (answers are text: a few times smaller). */
export async function encodeEntry(entry: CacheEntry): Promise<ArrayBuffer> {
  const stream = new Blob([JSON.stringify(entry)]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

/** A stored entry read back; null when it cannot be (a format this version does not know is a miss, never an error). */
export async function decodeEntry(stored: ArrayBuffer): Promise<CacheEntry | null> {
  try {
    const text = await new Response(new Blob([stored]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    const entry = JSON.parse(text) as CacheEntry;
    return entry.v === 1 ? entry : null;
  } catch {
    return null;
  }
}

/**
 * A stream's canonical chunks as stored: each chunk's usage zeroed; when none carried usage, a usage-only
 * chunk (OpenAI's `stream_options.include_usage` shape) added before the end, so a replay reports zero.
 */
export function zeroedEvents(events: string[]): string[] {
  let usage = false;
  const out = events.map((data) => {
    if (!data.includes('"usage"')) return data;
    try {
      const json = JSON.parse(data) as Record<string, unknown>;
      if (json.usage === undefined || json.usage === null) return data;
      usage = true;
      return JSON.stringify({ ...json, usage: ZERO_USAGE });
    } catch {
      return data;
    }
  });
  if (!usage) {
    const last = lastChunk(events);
    out.push(JSON.stringify({ id: last.id, object: "chat.completion.chunk", created: last.created, model: last.model, choices: [], usage: ZERO_USAGE }));
  }
  return out;
}

/** The last chunk's JSON (for the id, time and model a usage chunk repeats); empty when it cannot be read. */
function lastChunk(events: string[]): Record<string, unknown> {
  try {
    const json: unknown = JSON.parse(events[events.length - 1] ?? "{}");
    return typeof json === "object" && json !== null ? (json as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
