// Simulated embeddings in each protocol that has them: OpenAI's `POST /v1/embeddings` and Gemini's
// `:embedContent` / `:batchEmbedContents`. Deterministic: the same text (and dimensions) gives the same
// unit vector, so tests can compare them. Pure functions, no I/O.
import { countTokens, prng } from "./tokens";
import type { Refusal } from "./wire";

type Json = Record<string, unknown>;

/** Native sizes of the models we list; others get DEFAULT_DIMENSIONS. */
const NATIVE_DIMENSIONS: Record<string, number> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "gemini-embedding-001": 3072,
};
const DEFAULT_DIMENSIONS = 1024;

const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The unit vector of a text (or a token array, as its text) for a model, `dimensions` long. */
export function embeddingOf(text: string, model: string, dimensions?: number): number[] {
  const size = dimensions ?? NATIVE_DIMENSIONS[model] ?? DEFAULT_DIMENSIONS;
  const next = prng(fnv1a(`${model}\n${text}`));
  const v = Array.from({ length: size }, () => next() * 2 - 1);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => Math.round((x / norm) * 1e6) / 1e6);
}

/** The texts of an embeddings request (a directive is read from their join), and their token count. */
export type EmbeddingsAsk = { model: string; texts: string[]; tokens: number; dimensions?: number; base64: boolean };

function dims(v: unknown, max: number): number | undefined | Refusal {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) return { status: 400, message: `dimensions must be an integer from 1 to ${max}` };
  return v;
}

/** OpenAI's embeddings request: `input` a string, strings, a token array or token arrays. */
export function readOpenAiEmbeddings(body: unknown): EmbeddingsAsk | Refusal {
  if (!isRecord(body)) return { status: 400, message: "request body is not valid JSON" };
  const model = typeof body.model === "string" ? body.model : "";
  const input = body.input;
  let texts: string[];
  let tokens = 0;
  if (typeof input === "string") texts = [input];
  else if (Array.isArray(input) && input.length > 0 && input.every((i) => typeof i === "string")) texts = input as string[];
  else if (Array.isArray(input) && input.length > 0 && input.every((i) => typeof i === "number")) {
    texts = [(input as number[]).join(" ")];
    tokens = input.length;
  } else if (Array.isArray(input) && input.length > 0 && input.every((i) => Array.isArray(i) && i.every((t) => typeof t === "number"))) {
    texts = (input as number[][]).map((t) => t.join(" "));
    tokens = (input as number[][]).reduce((s, t) => s + t.length, 0);
  } else return { status: 400, message: "'input' must be a string, an array of strings, or an array of token arrays" };
  if (texts.some((t) => t === "")) return { status: 400, message: "'input' cannot contain an empty string" };
  const d = dims(body.dimensions, NATIVE_DIMENSIONS[model] ?? DEFAULT_DIMENSIONS);
  if (isRecord(d)) return d;
  if (body.encoding_format !== undefined && body.encoding_format !== "float" && body.encoding_format !== "base64")
    return { status: 400, message: "encoding_format must be float or base64" };
  return { model, texts, tokens: tokens || texts.reduce((s, t) => s + countTokens(t), 0), dimensions: d, base64: body.encoding_format === "base64" };
}

export function openAiEmbeddingsAnswer(ask: EmbeddingsAsk): string {
  const data = ask.texts.map((t, index) => {
    const v = embeddingOf(t, ask.model, ask.dimensions);
    return { object: "embedding", index, embedding: ask.base64 ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v };
  });
  return JSON.stringify({ object: "list", data, model: ask.model, usage: { prompt_tokens: ask.tokens, total_tokens: ask.tokens } });
}

/** Gemini's `:embedContent` (one `content`) or `:batchEmbedContents` (`requests`, each with its `content`). */
export function readGeminiEmbeddings(body: unknown, model: string, batch: boolean): EmbeddingsAsk | Refusal {
  if (!isRecord(body)) return { status: 400, message: "Invalid JSON payload received." };
  const requests = batch ? body.requests : [body];
  if (!Array.isArray(requests) || requests.length === 0) return { status: 400, message: "requests is not specified" };
  const texts: string[] = [];
  let dimensions: number | undefined;
  for (const r of requests as unknown[]) {
    if (!isRecord(r) || !isRecord(r.content) || !Array.isArray(r.content.parts)) return { status: 400, message: "content is not specified" };
    texts.push((r.content.parts as unknown[]).map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : "")).join(""));
    const d = dims(r.outputDimensionality, NATIVE_DIMENSIONS[model] ?? DEFAULT_DIMENSIONS);
    if (isRecord(d)) return d;
    dimensions = d;
  }
  return { model, texts, tokens: texts.reduce((s, t) => s + countTokens(t), 0), dimensions, base64: false };
}

/** Gemini reports no token usage for embeddings. */
export function geminiEmbeddingsAnswer(ask: EmbeddingsAsk, batch: boolean): string {
  const vectors = ask.texts.map((t) => ({ values: embeddingOf(t, ask.model, ask.dimensions) }));
  return JSON.stringify(batch ? { embeddings: vectors } : { embedding: vectors[0] });
}
