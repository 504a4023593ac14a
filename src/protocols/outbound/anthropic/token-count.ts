import type { TokenCountCarrier } from "../carrier-protocol";
import { anthropicBody } from "./request";

/** The Messages body's fields Anthropic's token count takes: the prompt and what shapes it; it refuses the generation fields (`max_tokens`, `stream`, …). */
const COUNTED = ["model", "system", "messages", "tools", "tool_choice", "thinking", "output_format"] as const;

/**
 * Anthropic's token count (`POST {base}/v1/messages/count_tokens`, free): the prompt exactly as the
 * completion would send it — the same translation (./request.ts), so the count is what the completion
 * is billed for its input — with the generation fields left out. Without the caller's `max_tokens`
 * (a count has none) the thinking budget is taken against the endpoint's largest completion.
 */
export const anthropicTokenCount: TokenCountCarrier = {
  url(base) {
    return `${base.replace(/\/$/, "")}/v1/messages/count_tokens`;
  },

  body(req, endpoint) {
    const full = anthropicBody({ ...req, max_tokens: undefined, max_completion_tokens: undefined }, false, null, endpoint);
    const out: Record<string, unknown> = {};
    for (const field of COUNTED) if (full[field] !== undefined) out[field] = full[field];
    return JSON.stringify(out);
  },

  answer(json) {
    const tokens = typeof json === "object" && json !== null ? (json as { input_tokens?: unknown }).input_tokens : undefined;
    return typeof tokens === "number" && Number.isSafeInteger(tokens) && tokens >= 0 ? tokens : null;
  },
};
