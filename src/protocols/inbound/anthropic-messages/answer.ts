import type { CanonicalAnswer } from "../../../request/answer";
import { withOrigin } from "./signature-origin";
import type { CarrierUsage } from "../../../request/usage";

type Obj = Record<string, unknown>;

/** Chat finish reasons as Anthropic stop reasons. */
export function stopReason(finish: string | null): string | null {
  switch (finish) {
    case null:
      return null;
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

/** Usage in Anthropic's meaning: `input_tokens` excludes what was read from or written to the cache. */
export function anthropicUsage(t: CarrierUsage): Obj {
  return {
    input_tokens: Math.max(0, t.promptTokens - t.cachedTokens - t.cacheWriteTokens),
    cache_creation_input_tokens: t.cacheWriteTokens,
    cache_read_input_tokens: t.cachedTokens,
    output_tokens: t.completionTokens,
  };
}

/** A message id for a generation: Anthropic's `msg_` prefix on our generation id. */
export function messageId(genId: string): string {
  return `msg_${genId.replace(/^gen-/, "")}`;
}

/** A tool call's arguments as a tool_use input: the JSON object, or the text under `_raw` when a carrier sent invalid JSON. */
export function toolInput(args: unknown): unknown {
  if (typeof args !== "string" || args === "") return {};
  try {
    const input: unknown = JSON.parse(args);
    return typeof input === "object" && input !== null && !Array.isArray(input) ? input : { _raw: args };
  } catch {
    return { _raw: args };
  }
}

/** The canonical answer's first choice as Anthropic content blocks: thinking (signed or redacted) first, then text, then tool_use. */
export function contentBlocks(answer: CanonicalAnswer): Obj[] {
  const choice = (answer.choices[0] ?? {}) as Obj;
  const message = (choice.message ?? {}) as Obj;
  const blocks: Obj[] = [];
  const details = Array.isArray(message.reasoning_details) ? (message.reasoning_details as Obj[]) : [];
  for (const d of details) {
    if (d.type === "reasoning.text")
      blocks.push({
        type: "thinking",
        thinking: typeof d.text === "string" ? d.text : "",
        signature: typeof d.signature === "string" ? withOrigin(d.signature, d) : "",
      });
    else if (d.type === "reasoning.encrypted" && typeof d.data === "string") blocks.push({ type: "redacted_thinking", data: withOrigin(d.data, d) });
  }
  const reasoning = typeof message.reasoning === "string" ? message.reasoning : typeof message.reasoning_content === "string" ? message.reasoning_content : "";
  if (!details.length && reasoning !== "") blocks.push({ type: "thinking", thinking: reasoning, signature: "" });
  if (typeof message.content === "string" && message.content !== "") blocks.push({ type: "text", text: message.content });
  if (Array.isArray(message.tool_calls))
    for (const call of message.tool_calls as Obj[]) {
      const fn = (call.function ?? {}) as Obj;
      blocks.push({ type: "tool_use", id: call.id, name: fn.name, input: toolInput(fn.arguments) });
    }
  return blocks;
}
