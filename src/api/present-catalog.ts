import type { Catalog, PricedEndpoint } from "../catalog/catalog";
import type { ModelEntry, ProviderEntry } from "../catalog/schema";
import { nanoToUsdString } from "../catalog/money";
import { carrierProtocol } from "../protocols/outbound";
import type { EndpointStats } from "../health/endpoint-stats";

/**
 * Pure mappings from the catalog to OpenRouter's public shapes (`Model`, `ListEndpointsResponse`,
 * `PublicEndpoint`, the `/providers` items). Every figure is derived from catalog.json or from
 * real traffic passed in; nothing is invented, so what we cannot know is `null`.
 */

/** Per-token USD decimal strings; the router charges exactly these nano amounts. Cache prices only where the catalog names them. */
export function presentPricing(
  e: Pick<
    PricedEndpoint,
    | "inputNano"
    | "outputNano"
    | "cacheReadNano"
    | "cacheWriteNano"
    | "cacheWrite1hNano"
    | "input_cache_read_per_1m"
    | "input_cache_write_per_1m"
    | "input_cache_write_1h_per_1m"
  >,
) {
  return {
    prompt: nanoToUsdString(e.inputNano),
    completion: nanoToUsdString(e.outputNano),
    request: "0",
    image: "0",
    ...(e.input_cache_read_per_1m === undefined ? {} : { input_cache_read: nanoToUsdString(e.cacheReadNano) }),
    ...(e.input_cache_write_per_1m === undefined ? {} : { input_cache_write: nanoToUsdString(e.cacheWriteNano) }),
    ...(e.input_cache_write_1h_per_1m === undefined ? {} : { input_cache_write_1h: nanoToUsdString(e.cacheWrite1hNano) }),
  };
}

/**
 * A carrier caches implicitly when it prices cache reads and the caller need not ask for caching: its
 * protocol's `caching` says which (Anthropic's is explicit, `cache_control`). OpenAI prices its implicit
 * cache writes too (GPT-6.1 Sol), so the write price says nothing about it.
 */
export function cachesImplicitly(e: PricedEndpoint): boolean {
  return e.input_cache_read_per_1m !== undefined && carrierProtocol(e).caching === "implicit";
}

export function presentArchitecture(m: ModelEntry) {
  return {
    modality: `${m.input_modalities.join("+")}->${m.output_modalities.join("+")}`,
    input_modalities: m.input_modalities,
    output_modalities: m.output_modalities,
    tokenizer: m.tokenizer,
    instruct_type: m.instruct_type,
  };
}

/** The endpoint the router tries first; the schema guarantees every model has one. */
function topEndpoint(catalog: Catalog, m: ModelEntry): PricedEndpoint {
  const top = catalog.endpoints(m.id)[0];
  if (!top) throw new Error(`catalog model ${m.id} has no endpoints`);
  return top;
}

/**
 * One `Model` of `GET /models`; pricing and top_provider come from the endpoint tried first (`top`: of
 * those a caller may use, for `GET /models/user`).
 */
export function presentModel(catalog: Catalog, m: ModelEntry, top: PricedEndpoint = topEndpoint(catalog, m)) {
  return {
    id: m.id,
    canonical_slug: m.canonical_slug,
    hugging_face_id: m.hugging_face_id,
    name: m.name,
    created: m.created,
    description: m.description,
    context_length: m.context_length,
    architecture: presentArchitecture(m),
    pricing: presentPricing(top),
    top_provider: { context_length: top.context_length, max_completion_tokens: top.max_completion_tokens, is_moderated: false },
    per_request_limits: null,
    supported_parameters: m.supported_parameters,
    default_parameters: null,
    supported_voices: null,
    knowledge_cutoff: m.knowledge_cutoff,
    expiration_date: null,
    links: { details: `/api/v1/models/${m.id}/endpoints` },
    // Not in the contract's Model (which allows more fields; its `alias_target` is the reverse, a `~latest` id's target):
    // the other names a request may use for this model, served and recorded as `id`.
    aliases: m.aliases ?? [],
  };
}
export type PresentedModel = ReturnType<typeof presentModel>;

/** `ModelsListResponse`; `next` is the path of the following page, or null on the last one. */
export function presentModelList(data: PresentedModel[], totalCount: number, next: string | null) {
  return { data, total_count: totalCount, links: { next } };
}

/** One `PublicEndpoint`: a carrier serving the model. */
export function presentEndpoint(m: ModelEntry, e: PricedEndpoint, stats: EndpointStats) {
  const provider = e.providerEntry;
  return {
    name: `${provider.name} | ${m.canonical_slug}`,
    model_id: m.canonical_slug,
    model_name: m.name,
    context_length: e.context_length,
    pricing: presentPricing(e),
    provider_name: provider.name,
    tag: provider.slug,
    quantization: e.quantization,
    max_completion_tokens: e.max_completion_tokens,
    // No separate prompt cap is catalogued; the context length is the only limit.
    max_prompt_tokens: null,
    supported_parameters: e.supportedParameters,
    status: 0,
    uptime_last_5m: stats.uptime_last_5m,
    uptime_last_30m: stats.uptime_last_30m,
    uptime_last_1d: stats.uptime_last_1d,
    supports_implicit_caching: cachesImplicitly(e),
    latency_last_30m: stats.latency_last_30m,
    throughput_last_30m: stats.throughput_last_30m,
  };
}

/**
 * `{ data: ListEndpointsResponse }`, endpoints cheapest first (the router balances among them: docs/routing.md).
 * `stats` is looked up by carrier slug, the name attempts are recorded under.
 */
export function presentEndpoints(catalog: Catalog, m: ModelEntry, stats: (carrierSlug: string) => EndpointStats) {
  return {
    data: {
      id: m.id,
      name: m.name,
      created: m.created,
      description: m.description,
      architecture: presentArchitecture(m),
      endpoints: catalog.endpoints(m.id).map((e) => presentEndpoint(m, e, stats(e.providerEntry.slug))),
    },
  };
}

export function presentProvider(p: ProviderEntry) {
  return {
    name: p.name,
    slug: p.slug,
    privacy_policy_url: p.privacy_policy_url,
    terms_of_service_url: p.terms_of_service_url,
    status_page_url: p.status_page_url,
    headquarters: p.headquarters,
    datacenters: p.datacenters,
    // Not in the contract's item (which allows more fields): what `data_collection`/`zdr` route by; null = unknown.
    data_policy: p.data_policy ?? null,
  };
}

/** `GET /providers` body. */
export function presentProviders(catalog: Catalog) {
  return { data: catalog.providers.map(presentProvider) };
}
