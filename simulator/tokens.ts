// The simulator's deterministic tokenizer and text generator.
// One token = one word or one punctuation mark, so counts are easy to predict in tests.
import { createHash } from "node:crypto";
import { mulberry32 } from "../src/routing/mulberry32";

const TOKEN_RE = /\w+|[^\w\s]/g;

/** Splits text into tokens: runs of word characters, or single non-space symbols. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN_RE) ?? [];
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}

/**
 * The text of a message `content`: a string, or an array of parts whose `text` fields are
 * joined with "\n" (so the token count is the sum over parts). Anything else has no text.
 */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content as unknown[]) {
    if (typeof part === "object" && part !== null && "text" in part && typeof part.text === "string") texts.push(part.text);
  }
  return texts.join("\n");
}

/** Tokens every message costs on top of its content, like real chat templates. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Tokens one media part costs when the catalog does not say (the router's documented default). */
export const DEFAULT_PART_TOKENS = 1600;

/** Tokens one part of each media kind costs: the catalog model's `image_tokens`, `file_tokens`, `audio_tokens`, `video_tokens`. */
export type PartAllowances = { image: number; file: number; audio: number; video: number };

/** The contract's media content part types (ChatContentItems) and the kind each is billed as. */
const PART_KINDS: Readonly<Record<string, keyof PartAllowances>> = {
  image_url: "image",
  file: "file",
  input_audio: "audio",
  video_url: "video",
  input_video: "video",
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Tokens a media part is billed by its size (simulator/media.ts: a PDF's pages, a WAV's seconds), by part. */
export type BilledMedia = WeakMap<object, number>;

/** Tokens of a message `content`'s media parts: by their size where billed so, else at their kind's allowance (1,600 where none is given). */
function partTokens(content: unknown, allowances: Partial<PartAllowances>, media?: BilledMedia): number {
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const p of content as unknown[]) {
    const kind = isObject(p) && typeof p.type === "string" ? PART_KINDS[p.type] : undefined;
    if (kind) total += media?.get(p as object) ?? allowances[kind] ?? DEFAULT_PART_TOKENS;
  }
  return total;
}

/** Tokens of an assistant message's earlier tool calls: each call's name and arguments. */
function toolCallTokens(calls: unknown): number {
  if (!Array.isArray(calls)) return 0;
  let total = 0;
  for (const call of calls as unknown[]) {
    const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
    if (!fn) continue;
    if (typeof fn.name === "string") total += countTokens(fn.name);
    if (typeof fn.arguments === "string") total += countTokens(fn.arguments);
  }
  return total;
}

/**
 * Prompt tokens of a `messages` array: each message's text (tool results included), its earlier
 * tool calls and each media part at its kind's allowance, plus a fixed overhead per message.
 */
export function countPromptTokens(messages: readonly unknown[], allowances: Partial<PartAllowances> = {}, media?: BilledMedia): number {
  let total = 0;
  for (const m of messages) {
    const content = isObject(m) ? m.content : undefined;
    total += countTokens(contentText(content)) + partTokens(content, allowances, media) + MESSAGE_OVERHEAD_TOKENS;
    if (isObject(m)) total += toolCallTokens(m.tool_calls);
  }
  return total;
}

/** Prompt tokens of a whole request: its messages, plus the JSON of `tools`, an object `tool_choice` and `response_format`. */
export function countRequestTokens(body: Record<string, unknown>, allowances: Partial<PartAllowances> = {}, media?: BilledMedia): number {
  let total = Array.isArray(body.messages) ? countPromptTokens(body.messages as unknown[], allowances, media) : 0;
  for (const field of ["tools", "tool_choice", "response_format"] as const) {
    const value = body[field];
    if (value !== undefined && value !== null && typeof value !== "string") total += countTokens(JSON.stringify(value));
  }
  return total;
}

/** A 32-bit seed derived from the request's messages and model: same request, same text. */
export function requestSeed(model: string, messages: unknown): number {
  const digest = createHash("sha256")
    .update(JSON.stringify([model, messages]))
    .digest();
  return digest.readUInt32BE(0);
}

/** The seeded generator of the simulated text (the same one seeds the router's routing draws). */
export const prng = mulberry32;

// Letters only, so each generated word is exactly one token under `tokenize`.
export const VOCABULARY = [
  "the",
  "switch",
  "yard",
  "carrier",
  "route",
  "token",
  "model",
  "signal",
  "rail",
  "train",
  "freight",
  "engine",
  "track",
  "station",
  "junction",
  "cargo",
  "depot",
  "lantern",
  "timber",
  "copper",
  "river",
  "harbor",
  "north",
  "south",
  "east",
  "west",
  "morning",
  "evening",
  "quiet",
  "rapid",
  "steady",
  "bright",
  "amber",
  "silver",
  "green",
  "blue",
  "stone",
  "bridge",
  "tunnel",
  "valley",
  "answer",
  "question",
  "reason",
  "because",
  "therefore",
  "and",
  "or",
  "but",
  "with",
  "without",
  "every",
  "some",
  "many",
  "few",
  "first",
  "last",
  "next",
  "over",
  "under",
  "between",
  "always",
  "never",
  "often",
  "soon",
] as const;

/** `count` words, each with its leading space (one token per word), drawn from `next`. */
export function generateWords(next: () => number, count: number): string[] {
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(" " + VOCABULARY[Math.floor(next() * VOCABULARY.length)]!);
  return words;
}

export interface CompletionInput {
  model: string;
  messages: readonly unknown[];
  /** Prompt tokens of the request (`countRequestTokens`). */
  promptTokens: number;
  /** The request's max_completion_tokens / max_tokens, if any. */
  maxTokens?: number;
  /** The `tokens=` directive: exact length before the max_tokens cap. */
  tokens?: number;
  /** The `big=` directive: pad the content to at least this many bytes. */
  big?: number;
  reasoning: boolean;
  /** Answer with a call of this tool instead of content. */
  toolName?: string;
  /** That call's arguments (JSON text), given whole: the call is not capped. Without them, `{"query":"<words>"}` within the cap. */
  toolArguments?: string;
  /** Which choice this is (`n`, `best_of`): 0 is the request's own seed, each other index a seed of its own. */
  choice?: number;
  /** The carrier bills reasoning on top of the cap: the cap bounds the content only, and reasoning is the request's budget when it gives one. */
  reasoningBeyondCap?: boolean;
  /** The request's `reasoning.max_tokens`. */
  reasoningBudget?: number;
}

export interface CompletionPlan {
  /** Reasoning words (empty unless the model reasons), each one token. */
  reasoning: string[];
  /** Content words, each one token (none when the answer is a tool call). */
  content: string[];
  /** A tool call: its name (one token) and its arguments in fragments of one token each. */
  toolCall?: { name: string; arguments: string[] };
  finishReason: "stop" | "length" | "tool_calls";
  promptTokens: number;
  /** Reasoning plus content tokens, as in OpenAI's usage. */
  completionTokens: number;
}

/** What the simulated model answers: fully determined by the request and its directives. */
export function planCompletion(input: CompletionInput): CompletionPlan {
  const seed = (requestSeed(input.model, input.messages) + (input.choice ?? 0) * 0x9e3779b9) >>> 0;
  const wanted = input.tokens ?? 8 + (seed % 25);
  const n = input.maxTokens === undefined ? wanted : Math.min(wanted, input.maxTokens);
  const next = prng(seed);
  const beyond = input.reasoningBeyondCap === true;
  // Within the cap, reasoning takes a quarter of it; beyond the cap, the whole budget (the worst case), else a quarter on top.
  const reasoning = generateWords(next, !input.reasoning ? 0 : beyond ? (input.reasoningBudget ?? Math.ceil(n / 4)) : Math.ceil(n / 4));
  const content = generateWords(next, beyond ? n : n - reasoning.length);
  if (input.big !== undefined) padContent(content, input.big);
  const finishReason = wanted > n ? "length" : "stop";
  if (input.toolName !== undefined && input.toolArguments !== undefined) {
    const args = argumentFragments(input.toolArguments);
    return {
      reasoning,
      content: [],
      toolCall: { name: input.toolName, arguments: args },
      finishReason: "tool_calls",
      promptTokens: input.promptTokens,
      completionTokens: reasoning.length + 1 + args.length,
    };
  }
  if (input.toolName !== undefined) {
    // The call spends the content's budget: name, `{"query":"`, words, `"}` (at least those three).
    const words = content.slice(0, Math.max(0, content.length - 3));
    const args = ['{"query":"', ...words, '"}'];
    return {
      reasoning,
      content: [],
      toolCall: { name: input.toolName, arguments: args },
      finishReason: finishReason === "stop" ? "tool_calls" : finishReason,
      promptTokens: input.promptTokens,
      completionTokens: reasoning.length + 1 + args.length,
    };
  }
  return { reasoning, content, finishReason, promptTokens: input.promptTokens, completionTokens: reasoning.length + content.length };
}

/** JSON text in fragments of one token each (with the spaces before it), so they join back to exactly the text. */
export function argumentFragments(json: string): string[] {
  const fragments: string[] = json.match(/\s*(?:\w+|[^\w\s])/g) ?? [];
  const tail = json.slice(fragments.join("").length); // trailing spaces, if any
  if (tail) fragments.push(tail);
  return fragments;
}

/**
 * Lengthens the last content word (a longer run of letters is still one token) until the
 * content has `bytes` bytes, so token counts stay exact. Empty content gains one word.
 */
function padContent(content: string[], bytes: number): void {
  const size = content.reduce((sum, w) => sum + w.length, 0); // ASCII only: chars = bytes
  if (size >= bytes) return;
  if (content.length === 0) {
    content.push(" " + "x".repeat(Math.max(1, bytes - 1)));
    return;
  }
  content[content.length - 1] += "x".repeat(bytes - size);
}
