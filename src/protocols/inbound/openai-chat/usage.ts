import { nanoToUsd } from "../../../catalog/money";
import type { CarrierUsage } from "../../../request/usage";
import type { Charge } from "../../../request/charge";

/**
 * The caller's `usage` (OpenRouter's ChatUsage): the carrier's fields kept, the counts as billed,
 * `prompt_tokens_details` with `cached_tokens` (and `cache_write_tokens` when the carrier wrote any),
 * `completion_tokens_details.reasoning_tokens`, `cost` (USD charged) and `cost_details` (its prompt and
 * completion parts). Our internal `cache_write_1h_tokens` never leaves.
 */
export function presentUsage(carrier: unknown, tokens: CarrierUsage, charged: Pick<Charge, "costNano">, completionPriceNano: number) {
  const sent = typeof carrier === "object" && carrier !== null ? (carrier as Record<string, unknown>) : {};
  const { cache_write_1h_tokens: _internal, ...promptDetails } = record(sent.prompt_tokens_details);
  const completionNano = charged.costNano === 0 ? 0 : tokens.completionTokens * completionPriceNano;
  return {
    ...sent,
    prompt_tokens: tokens.promptTokens,
    completion_tokens: tokens.completionTokens,
    total_tokens: tokens.promptTokens + tokens.completionTokens,
    prompt_tokens_details: {
      ...promptDetails,
      cached_tokens: tokens.cachedTokens,
      ...(tokens.cacheWriteTokens > 0 ? { cache_write_tokens: tokens.cacheWriteTokens } : {}),
    },
    completion_tokens_details: { ...record(sent.completion_tokens_details), reasoning_tokens: tokens.reasoningTokens },
    cost: nanoToUsd(charged.costNano),
    cost_details: {
      upstream_inference_cost: null,
      upstream_inference_prompt_cost: nanoToUsd(charged.costNano - completionNano),
      upstream_inference_completions_cost: nanoToUsd(completionNano),
    },
  };
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
