import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "../api/chat-request";
import { estimatePromptTokens } from "../relay/token-estimate";

/** Request fields an endpoint must support to serve the request as asked: tool use and output formats. */
const FEATURES = ["tools", "tool_choice", "response_format"] as const;

/** What a request needs of a model's endpoints: room for its prompt and completion cap, and features. */
export type Need = { promptTokens: number; completionTokens: number; features: string[] };

export type TooLong = { modelId: string; contextLength: number; need: Need };
export type Fit = { endpoints: PricedEndpoint[] } | { tooLong: TooLong };

/** The request's needs at one model (its image allowance prices image parts into the prompt estimate). */
export function requestNeed(body: ChatRequest, imageTokens: number): Need {
  return {
    promptTokens: estimatePromptTokens(body, imageTokens),
    completionTokens: body.max_completion_tokens ?? body.max_tokens ?? 0,
    features: FEATURES.filter((f) => body[f] != null),
  };
}

/**
 * The model's endpoints the request fits: the estimated prompt plus the requested completion cap within
 * the endpoint's context (none fitting: `tooLong`); then, when the request uses tools, tool_choice or
 * response_format, the endpoints that support them — unless none does, then all that fit (a carrier
 * may still cope; `provider.require_parameters` makes that a hard filter).
 */
export function fitRequest(endpoints: PricedEndpoint[], need: Need): Fit {
  const room = need.promptTokens + need.completionTokens;
  const fitting = endpoints.filter((e) => room <= e.context_length);
  if (fitting.length === 0)
    return { tooLong: { modelId: endpoints[0]?.modelId ?? "", contextLength: Math.max(0, ...endpoints.map((e) => e.context_length)), need } };
  if (need.features.length === 0) return { endpoints: fitting };
  const able = fitting.filter((e) => need.features.every((f) => e.supportedParameters.includes(f)));
  return { endpoints: able.length ? able : fitting };
}

/** The 400 message when no candidate model has room for the request. */
export function contextTooLongMessage(tooLong: TooLong[]): string {
  const need = tooLong[0]!.need;
  const total = need.promptTokens + need.completionTokens;
  const models = tooLong.map((t) => `${t.modelId} (${t.contextLength} tokens)`).join(", ");
  const completion = need.completionTokens ? ` + ${need.completionTokens} completion (max_tokens)` : "";
  return `The request needs about ${total} tokens (${need.promptTokens} prompt, estimated${completion}), more than the largest context of ${models}. Shorten the messages or lower max_tokens.`;
}
