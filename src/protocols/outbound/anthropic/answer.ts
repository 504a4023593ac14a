import type { AnswerOrUnusable } from "../../../request/answer";
import { utf8Bytes } from "../../../request/token-estimate";
import { ANTHROPIC_REASONING_FORMAT } from "./thinking";

type Obj = Record<string, unknown>;

/** Anthropic's stop reasons as chat finish reasons. */
export const FINISH_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

export function finishReason(stop: unknown): string | null {
  return typeof stop === "string" ? (FINISH_REASONS[stop] ?? "stop") : null;
}

/** Anthropic usage numbers: `input_tokens` excludes what was read from or written to the cache. */
export type AnthropicUsage = { input: number; cacheRead: number; cacheWrite: number; cacheWrite1h: number; output: number };

export function readAnthropicUsage(u: unknown, into?: AnthropicUsage): AnthropicUsage {
  const usage = (typeof u === "object" && u !== null ? u : {}) as Obj;
  const out = into ?? { input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0 };
  if (isCount(usage.input_tokens)) out.input = usage.input_tokens;
  if (isCount(usage.cache_read_input_tokens)) out.cacheRead = usage.cache_read_input_tokens;
  if (isCount(usage.cache_creation_input_tokens)) out.cacheWrite = usage.cache_creation_input_tokens;
  const creation = usage.cache_creation as Obj | undefined;
  if (typeof creation === "object" && creation !== null && isCount(creation.ephemeral_1h_input_tokens)) out.cacheWrite1h = creation.ephemeral_1h_input_tokens;
  if (isCount(usage.output_tokens)) out.output = usage.output_tokens;
  return out;
}

/**
 * Anthropic usage in the canonical (OpenRouter) meaning: the prompt includes cache reads and writes;
 * thinking is part of the output (Anthropic does not count it apart: `thinkingBytes` gives our estimate,
 * never more than the output).
 */
export function canonicalUsage(u: AnthropicUsage, thinkingBytes: number): Obj {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: {
      cached_tokens: u.cacheRead,
      cache_write_tokens: u.cacheWrite,
      ...(u.cacheWrite1h > 0 ? { cache_write_1h_tokens: Math.min(u.cacheWrite1h, u.cacheWrite) } : {}),
    },
    completion_tokens_details: { reasoning_tokens: Math.min(u.output, Math.ceil(thinkingBytes / 4)) },
  };
}

/**
 * A Messages answer (`type: "message"`) as a chat completion: text, tool calls, signed reasoning, usage.
 * With `excludeReasoning` (`reasoning.exclude`) the thinking is billed but not returned.
 */
export function anthropicAnswer(json: unknown, excludeReasoning = false): AnswerOrUnusable {
  if (typeof json !== "object" || json === null || (json as Obj).type !== "message" || !Array.isArray((json as Obj).content))
    return { unusable: "the carrier's answer is not an Anthropic message" };
  const msg = json as Obj & { content: Obj[] };
  let text = "";
  let reasoning = "";
  const details: Obj[] = [];
  const toolCalls: Obj[] = [];
  // Who signed: the next turn passes a signature on only to the model that can verify it (./thinking.ts).
  const signedBy = typeof msg.model === "string" && msg.model !== "" ? { signed_by: msg.model } : {};
  for (const block of msg.content) {
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    else if (block.type === "thinking") {
      const thinking = typeof block.thinking === "string" ? block.thinking : "";
      reasoning += thinking;
      details.push({
        type: "reasoning.text",
        text: thinking,
        signature: block.signature ?? null,
        format: ANTHROPIC_REASONING_FORMAT,
        index: details.length,
        ...signedBy,
      });
    } else if (block.type === "redacted_thinking")
      details.push({ type: "reasoning.encrypted", data: block.data, format: ANTHROPIC_REASONING_FORMAT, index: details.length, ...signedBy });
    else if (block.type === "tool_use")
      toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
  }
  const message: Obj = { role: "assistant", content: text === "" && toolCalls.length ? null : text };
  if (details.length && !excludeReasoning) {
    message.reasoning = reasoning;
    message.reasoning_details = details;
  }
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    answer: {
      id: msg.id,
      object: "chat.completion",
      model: msg.model,
      choices: [{ index: 0, message, finish_reason: finishReason(msg.stop_reason) }],
      ...(msg.usage === undefined ? {} : { usage: canonicalUsage(readAnthropicUsage(msg.usage), utf8Bytes(reasoning)) }),
    },
  };
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
