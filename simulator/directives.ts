// `[sim ...]` directives: instructions embedded in the last user message that make the
// simulated carrier misbehave on purpose. Pure functions, no I/O.
import { DEFAULT_OUTAGE_STATUS, validOutageStatus } from "./outages";
import { contentText } from "./tokens";

export interface Directives {
  /** Respond with this HTTP status and an error body (only when >= 300). */
  status?: number;
  /** Never answer. */
  hang: boolean;
  /** Destroy the socket after this many stream chunks (0 = before the headers). */
  resetAfter?: number;
  /** Wait this long before the first byte. */
  delayMs?: number;
  /** Stream: wait this long after the finish chunks before the usage chunk (OpenAI chat). */
  usageDelayMs?: number;
  /** Exact completion length (still capped by max_tokens). */
  tokens?: number;
  /** Omit `usage` everywhere. */
  noUsage: boolean;
  /** Stream pace in tokens per second. */
  tps?: number;
  /** Emit a body (or one stream event) that is not JSON. */
  malformed: boolean;
  /** Interleave junk SSE lines between stream events. */
  garbage: boolean;
  /** Pad the completion content to at least this many bytes. */
  big?: number;
  /** Label for `/__sim/requests?tag=`. */
  tag?: string;
  /** Stream: keep the connection open after `data: [DONE]` until the client closes it. */
  linger: boolean;
  /** Put the carrier's own `provider` field in every chunk and body, right after `model`. */
  providerField: boolean;
  /** Name the reasoning field `reasoning_content` (vLLM, DeepSeek) instead of `reasoning`. */
  reasoningContent: boolean;
  /** Answer with a tool call (arguments streamed one token per chunk) instead of content. */
  toolCall: boolean;
  /** `tool_call=<name>`: answer with a call of this tool of the request, with the arguments `args=` gives. */
  toolCallName?: string;
  /** `args=<base64url of a JSON object>`: the named call's arguments; null when the value is not that (the call is then refused). */
  toolCallArgs?: Record<string, unknown> | null;
  /** No finish reason: `finish_reason: null` in the body, no finish chunk in a stream. */
  noFinish: boolean;
  /** `[sim outage requests=N status=S]`: arm an outage of the carrier being played. */
  outage?: { requests: number; status: number };
  /** `cache_read=N`: report N prompt tokens read from the carrier's cache (out of the prompt), instead of the prefix cache's figure. */
  cacheRead?: number;
  /** `cache_write=N`: report N prompt tokens written to the cache, where the protocol reports writes (Anthropic). */
  cacheWrite?: number;
  /** `cap_field=…`: the only completion cap field this carrier reads (default: max_completion_tokens, else max_tokens). */
  capField?: "max_tokens" | "max_completion_tokens";
}

const DIRECTIVE_RE = /\[sim\b([^\]]*)\]/g;

function nonNegativeInt(value: string): number | undefined {
  return /^\d+$/.test(value) ? Number(value) : undefined;
}

function positiveNumber(value: string): number | undefined {
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  return n > 0 ? n : undefined;
}

/**
 * Every `[sim ...]` directive in `text` that applies when playing `carrier`, merged left to
 * right (a later value overrides an earlier one). A directive naming another carrier with
 * `carrier=<slug>` is skipped entirely. Unknown words and malformed values are ignored.
 */
export function parseDirectives(text: string, carrier: string): Directives {
  const d: Directives = {
    hang: false,
    noUsage: false,
    malformed: false,
    garbage: false,
    linger: false,
    providerField: false,
    reasoningContent: false,
    toolCall: false,
    noFinish: false,
  };
  for (const match of text.matchAll(DIRECTIVE_RE)) {
    const words = (match[1] ?? "")
      .trim()
      .split(/\s+/)
      .filter((w) => w.length > 0);
    const pairs = words.map((w) => {
      const eq = w.indexOf("=");
      return eq < 0 ? { key: w, value: undefined } : { key: w.slice(0, eq), value: w.slice(eq + 1) };
    });
    const target = pairs.find((p) => p.key === "carrier")?.value;
    if (target !== undefined && target !== carrier) continue;
    if (pairs.some((p) => p.key === "outage" && p.value === undefined)) {
      // Its status= is the outage's, not this request's: only requests=, status= and tag= count here.
      d.outage = parseOutage(pairs);
      const tag = pairs.find((p) => p.key === "tag")?.value;
      if (tag !== undefined) applyWord(d, "tag", tag);
      continue;
    }
    for (const { key, value } of pairs) applyWord(d, key, value);
  }
  return d;
}

function parseOutage(pairs: readonly { key: string; value: string | undefined }[]): { requests: number; status: number } {
  const value = (key: string) => {
    const v = pairs.find((p) => p.key === key)?.value;
    return v === undefined ? undefined : nonNegativeInt(v);
  };
  const status = value("status");
  return { requests: value("requests") ?? 1, status: status !== undefined && validOutageStatus(status) ? status : DEFAULT_OUTAGE_STATUS };
}

function applyWord(d: Directives, key: string, value: string | undefined): void {
  if (value === undefined) {
    if (key === "hang") d.hang = true;
    else if (key === "no_usage") d.noUsage = true;
    else if (key === "malformed") d.malformed = true;
    else if (key === "garbage") d.garbage = true;
    else if (key === "linger") d.linger = true;
    else if (key === "provider_field") d.providerField = true;
    else if (key === "reasoning_content") d.reasoningContent = true;
    else if (key === "tool_call") d.toolCall = true;
    else if (key === "no_finish") d.noFinish = true;
    return;
  }
  switch (key) {
    case "status": {
      const n = nonNegativeInt(value);
      if (n !== undefined && n >= 100 && n <= 599) d.status = n;
      break;
    }
    case "reset_after":
      d.resetAfter = nonNegativeInt(value) ?? d.resetAfter;
      break;
    case "delay_ms":
      d.delayMs = nonNegativeInt(value) ?? d.delayMs;
      break;
    case "usage_delay_ms":
      d.usageDelayMs = nonNegativeInt(value) ?? d.usageDelayMs;
      break;
    case "tokens":
      d.tokens = nonNegativeInt(value) ?? d.tokens;
      break;
    case "big":
      d.big = nonNegativeInt(value) ?? d.big;
      break;
    case "tps":
      d.tps = positiveNumber(value) ?? d.tps;
      break;
    case "tag":
      if (value.length > 0) d.tag = value;
      break;
    case "cache_read":
      d.cacheRead = nonNegativeInt(value) ?? d.cacheRead;
      break;
    case "cache_write":
      d.cacheWrite = nonNegativeInt(value) ?? d.cacheWrite;
      break;
    case "tool_call":
      if (value.length > 0) d.toolCallName = value;
      break;
    case "args":
      d.toolCallArgs = jsonObjectOf(value);
      break;
    case "cap_field":
      if (value === "max_tokens" || value === "max_completion_tokens") d.capField = value;
      break;
  }
}

/** The JSON object a base64url value (padding optional) encodes; null when it encodes anything else. */
function jsonObjectOf(value: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(value)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The text of the last `role: "user"` message, or "" when there is none. */
export function lastUserText(messages: readonly unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (typeof m === "object" && m !== null && "role" in m && m.role === "user") {
      return contentText("content" in m ? m.content : undefined);
    }
  }
  return "";
}
