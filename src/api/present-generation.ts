import type { NewGeneration } from "../db/schema";
import { nanoToUsd } from "../catalog/money";
import { AUTO_MODEL } from "../catalog/catalog";
import { parseAttempts } from "../db/carrier-attempt";

/** A stored generation in the shape of the specification (2.3) and the contract's GenerationResponse. */
export function presentGeneration(g: NewGeneration) {
  return {
    id: g.id,
    model: g.model,
    provider_name: g.providerName ?? null,
    app: g.app ?? null,
    streamed: g.streamed,
    created_at: new Date(g.createdAt).toISOString(),
    latency: g.latencyMs ?? null,
    generation_time: g.generationTimeMs ?? null,
    tokens_prompt: g.tokensPrompt,
    tokens_completion: g.tokensCompletion,
    native_tokens_prompt: g.tokensPrompt,
    native_tokens_completion: g.tokensCompletion,
    native_tokens_reasoning: g.tokensReasoning,
    total_cost: nanoToUsd(g.costNano),
    usage: nanoToUsd(g.costNano),
    finish_reason: g.finishReason ?? null,
    native_finish_reason: g.finishReason ?? null,
    status: g.status,
    error_message: g.errorMessage ?? null,
    upstream_id: g.upstreamId ?? null,
    cancelled: g.cancelled ?? false,
    usage_source: g.usageSource ?? null,
    insured: g.insured ?? false,
    http_referer: g.httpReferer ?? null,
    user_agent: g.userAgent ?? null,
    origin: g.httpReferer ?? "",
    app_id: null,
    // What caching saved (negative: what cache writes cost beyond the input price); null when the prompt touched no cache.
    cache_discount: g.tokensCached || g.tokensCacheWrite ? nanoToUsd(g.cacheDiscountNano ?? 0) : null,
    // A BYOK request: what the carrier charged the account with its own key (total_cost is the fee; docs/byok.md).
    upstream_inference_cost: g.byok ? nanoToUsd(g.byokUpstreamNano ?? 0) : null,
    moderation_latency: null,
    service_tier: null,
    native_tokens_cached: g.tokensCached ?? 0,
    // Not in the contract's item (which allows more fields): prompt tokens written to the carrier's cache.
    native_tokens_cache_write: g.tokensCacheWrite ?? 0,
    native_tokens_completion_images: 0,
    num_media_prompt: 0,
    num_input_audio_prompt: 0,
    num_media_completion: 0,
    num_search_results: 0,
    num_fetches: 0,
    web_search_engine: null,
    is_byok: g.byok ?? false,
    external_user: g.externalUser ?? null,
    session_id: g.sessionId ?? null,
    api_type: g.inboundApi === "embeddings" ? "embeddings" : "completions",
    // Not in the contract's item (which allows more fields): the API the caller spoke (chat, messages, responses, embeddings).
    inbound_api: g.inboundApi ?? "chat",
    preset_id: g.presetId ?? null,
    // Not in the contract's item (which allows more fields): the preset's slug and the version applied (docs/teams.md#presets).
    preset: g.preset ?? null,
    preset_version: g.presetVersion ?? null,
    // The generation whose cached answer served this one, at no cost (docs/caching.md); null when a carrier served it.
    response_cache_source_id: g.responseCacheSourceId ?? null,
    // Not in the contract's item (which allows more fields): served from the answer cache.
    cache_hit: g.responseCacheSourceId != null,
    router: g.strategy === "auto" ? AUTO_MODEL : null,
    // Not in the contract's item (which allows more fields): how the router chose (direct, fallback, auto).
    routing_strategy: g.strategy ?? null,
    provider_responses: presentAttempts(g.providerResponses),
    // Not in the contract's item (which allows more fields): the completion cap the router set on the carrier
    // because the key's limit or the balance could not pay the model's maximum (the caller set none); else null.
    adjusted_max_tokens: g.adjustedMaxTokens ?? null,
    data_region: "global", // no regional routing: every request is served globally (the contract allows global, europe, us)
    workspace_id: null,
  };
}

/** The record's attempts as the contract's ProviderResponse list (latency in ms); null when no carrier was tried. */
function presentAttempts(json: string | null | undefined) {
  if (!json) return null;
  return parseAttempts(json).map((a) => ({
    provider_name: a.providerName,
    model_permaslug: a.model,
    endpoint_id: `${a.model}@${a.provider}`,
    status: a.status,
    latency: a.latencyMs,
    is_byok: false,
  }));
}
