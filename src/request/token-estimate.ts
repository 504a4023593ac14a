import type { ChatRequest } from "./chat-request";
import { countParts } from "./billed-fields";
import { partTokensOf, type PartTokens } from "../catalog/modalities";
import { plainUsage, type CarrierUsage } from "./usage";

/**
 * The one token estimate, used only when a carrier reports no usage (a stream it failed, a caller
 * who left before the usage chunk, a carrier that omits usage). docs/reliability.md states its error bound.
 *
 * - completion ≈ max(delta events that carried generated output, ⌈output bytes ÷ 4⌉) + output images × the
 *   model's image allowance. Output bytes are the UTF-8 bytes of every generated text field as sent
 *   (JSON-escaped: `\n` counts 2): content, reasoning / reasoning_content / reasoning_details (the same
 *   text, counted once), refusal, tool-call names and arguments, audio transcripts.
 * - prompt ≈ ⌈request text bytes ÷ 4⌉ + 4 per message + each media part (image, file, audio, video) × the
 *   model's allowance for its kind, where the text is every
 *   message's content (text parts, tool results), earlier tool calls, and the JSON of `tools`,
 *   `tool_choice`, `response_format` (and the legacy `functions`/`function_call`).
 */
export const BYTES_PER_TOKEN = 4;
/** Tokens a chat template adds per message (role markers). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The generated output of one stream (or one non-stream answer), counted as it is relayed. */
export class OutputMeter {
  /** Delta events (or answer choices) that carried generated output. */
  events = 0;
  /** Bytes of generated text, as sent. */
  bytes = 0;
  /** The reasoning part of `bytes`. */
  reasoningBytes = 0;
  /** Generated images. */
  images = 0;

  /**
   * Counts one chunk from its JSON text, without parsing it. `extraBytes` is the chunk's UTF-8 size minus its
   * length in UTF-16 units (0 when it is ASCII). In valid JSON a `"key":"` sequence is always a key whose value
   * is a string (a quote inside a string is escaped), so the scan finds every text field and skips its value.
   */
  addJson(json: string, extraBytes: number): void {
    let plain = 0;
    let reasoning = 0; // reasoning and reasoning_content: the same text when a carrier sends both
    let details = 0; // reasoning_details text and summaries: the same text again (OpenRouter sends both)
    let opaque = false;
    OUTPUT_KEY.lastIndex = 0;
    for (let m = OUTPUT_KEY.exec(json); m !== null; m = OUTPUT_KEY.exec(json)) {
      const key = m[1];
      if (key === undefined) {
        if (m[2] === "image_url") this.images++;
        else opaque = true; // encrypted reasoning or audio data: output, but not text
        continue;
      }
      const start = OUTPUT_KEY.lastIndex;
      const end = closingQuote(json, start);
      const n = extraBytes === 0 ? end - start : utf8Bytes(json, start, end);
      OUTPUT_KEY.lastIndex = end + 1;
      if (key === "reasoning" || key === "reasoning_content") reasoning = Math.max(reasoning, n);
      else if (key === "text" || key === "summary") details += n;
      else plain += n;
    }
    this.add(plain, Math.max(reasoning, details), opaque);
  }

  /** Counts one parsed delta (stream) or message (non-stream). */
  addParsed(delta: Obj): void {
    let plain = sent(delta.refusal);
    const content = delta.content;
    if (typeof content === "string") plain += sent(content);
    else if (Array.isArray(content)) for (const part of content) if (isObj(part)) plain += sent(part.text);
    if (Array.isArray(delta.tool_calls))
      for (const call of delta.tool_calls) if (isObj(call) && isObj(call.function)) plain += sent(call.function.name) + sent(call.function.arguments);
    let opaque = false;
    if (isObj(delta.audio)) {
      plain += sent(delta.audio.transcript);
      opaque = typeof delta.audio.data === "string" && delta.audio.data !== "";
    }
    let details = 0;
    if (Array.isArray(delta.reasoning_details))
      for (const d of delta.reasoning_details)
        if (isObj(d)) {
          details += sent(d.text) + sent(d.summary);
          if (typeof d.data === "string" && d.data !== "") opaque = true;
        }
    if (Array.isArray(delta.images)) this.images += delta.images.length;
    this.add(plain, Math.max(sent(delta.reasoning), sent(delta.reasoning_content), details), opaque);
  }

  /** Output events and images so far: grows with every chunk that carried output. */
  delivered(): number {
    return this.events + this.images;
  }

  /** The completion estimate; `imageTokens` is the model's per-image allowance. */
  completionTokens(imageTokens: number): number {
    return Math.max(this.events, Math.ceil(this.bytes / BYTES_PER_TOKEN)) + this.images * imageTokens;
  }

  /** The reasoning share of the estimate, never more than the completion. */
  reasoningTokens(imageTokens: number): number {
    return Math.min(Math.ceil(this.reasoningBytes / BYTES_PER_TOKEN), this.completionTokens(imageTokens));
  }

  private add(plain: number, reasoning: number, opaque: boolean): void {
    if (plain + reasoning > 0 || opaque) this.events++;
    this.bytes += plain + reasoning;
    this.reasoningBytes += reasoning;
  }
}

// A text field whose value is a string, or an image / opaque output field.
const OUTPUT_KEY = /"(content|reasoning|reasoning_content|refusal|name|arguments|text|summary|transcript)":"|"(image_url|data)":/g;

/** Index of the quote closing the JSON string whose contents start at `from` (the end if unterminated). */
function closingQuote(json: string, from: number): number {
  for (let i = json.indexOf('"', from); i >= 0; i = json.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (json.charCodeAt(i - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return json.length;
}

/** UTF-8 bytes of `s.slice(start, end)`, without copying it. */
export function utf8Bytes(s: string, start = 0, end = s.length): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < end) {
      n += 4; // a surrogate pair: one 4-byte character
      i++;
    } else n += 3;
  }
  return n;
}

/** Bytes of a generated text field as a carrier sends it (JSON-escaped), 0 when it is not a string. */
function sent(v: unknown): number {
  return typeof v === "string" && v !== "" ? utf8Bytes(JSON.stringify(v)) - 2 : 0;
}

/** The prompt estimate; `partTokens` are the model's per-part allowances. */
export function estimatePromptTokens(body: ChatRequest, partTokens: PartTokens): number {
  let bytes = 0;
  for (const m of body.messages) {
    if (typeof m.content === "string") bytes += utf8Bytes(m.content);
    else if (Array.isArray(m.content)) for (const part of m.content) if (typeof part.text === "string") bytes += utf8Bytes(part.text);
    if (Array.isArray(m.tool_calls))
      for (const call of m.tool_calls as unknown[]) if (isObj(call) && isObj(call.function)) bytes += text(call.function.name) + text(call.function.arguments);
  }
  for (const field of ["tools", "tool_choice", "response_format", "functions", "function_call"] as const) {
    const v = (body as Obj)[field];
    if (v !== undefined && v !== null) bytes += typeof v === "string" ? utf8Bytes(v) : utf8Bytes(JSON.stringify(v));
  }
  return Math.ceil(bytes / BYTES_PER_TOKEN) + body.messages.length * MESSAGE_OVERHEAD_TOKENS + partTokensOf(countParts(body), partTokens);
}

function text(v: unknown): number {
  return typeof v === "string" ? utf8Bytes(v) : 0;
}

/** The usage our estimate bills when a carrier reports none: the prompt, and what `output` measured was delivered (no cache: none is known). */
export function estimatedUsage(body: ChatRequest, partTokens: PartTokens, output: OutputMeter): CarrierUsage {
  return plainUsage(estimatePromptTokens(body, partTokens), output.completionTokens(partTokens.image), output.reasoningTokens(partTokens.image));
}
