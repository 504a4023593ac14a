// What some models refuse on a protocol, as their carrier does, by model id. Pure functions.

/**
 * OpenAI's GPT-6 family takes function tools on Chat Completions only with `reasoning_effort: "none"`
 * (tools with reasoning go to the Responses API), and GPT-6.1 Sol and GPT-6 Astra take no `none` at all:
 * OpenAI's "Using GPT-6" guide and its deployment checklist.
 */
const CHAT_TOOLS_ONLY_WITHOUT_REASONING = /^gpt-6(\.\d+)?-/;
const ALWAYS_REASONS = /^gpt-6(\.1-sol|-astra)/;

/** Why a Chat Completions request is refused for its model's rules, as OpenAI words it; null when it is not. */
export function chatRulesRefusal(model: string, hasTools: boolean, effort: unknown): string | null {
  if (ALWAYS_REASONS.test(model) && (effort === "none" || effort === "minimal"))
    return `Unsupported value: 'reasoning_effort' does not support '${effort}' with this model. Supported values are: 'low', 'medium', 'high', and 'xhigh'.`;
  if (hasTools && CHAT_TOOLS_ONLY_WITHOUT_REASONING.test(model) && effort !== "none")
    return `Function tools with reasoning_effort are not supported for ${model} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`;
  return null;
}
