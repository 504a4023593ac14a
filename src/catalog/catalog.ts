import { AUTO_MODEL, catalogSchema, type CatalogFile, type EndpointEntry, type ModelEntry, type ProviderEntry } from "./schema";
import { perMillionToNanoPerToken, type TokenPrices } from "./money";
import { DEFAULT_PART_TOKENS, type MediaRates, type PartTokens } from "./modalities";

export { AUTO_MODEL };

/** A model endpoint with its prices resolved to integer nano-USD per token. */
export interface PricedEndpoint extends EndpointEntry {
  /** The catalog model this endpoint serves (one PricedEndpoint per model and carrier). */
  modelId: string;
  inputNano: number;
  outputNano: number;
  /** Cache prices per token (each the input price where the catalog names none). */
  cacheReadNano: number;
  cacheWriteNano: number;
  cacheWrite1hNano: number;
  /** Prices above a prompt length (`long_context`), null when the endpoint has one price. */
  longContext: TokenPrices["longContext"];
  providerEntry: ProviderEntry;
  /** The model's allowance per media part in tokens (`image_tokens`, `file_tokens`, …, else DEFAULT_PART_TOKENS): the estimate's. */
  partTokens: PartTokens;
  /** The model's rates for measured media parts: the hold's. */
  mediaRates: MediaRates;
  /** The model's input modalities: a part of another kind is refused (400). */
  inputModalities: readonly string[];
  /** The model's output modalities: a request asking for another (`modalities`) is refused (400). */
  outputModalities: readonly string[];
  /** The endpoint's `supported_parameters`, else the model's (reasoning ones only where it reasons). */
  supportedParameters: string[];
  /**
   * Set only on a request's copy of the endpoint it was served by with the account's own carrier key
   * (docs/byok.md): that request is billed this many thousandths of a percent of what the carrier charged.
   */
  byokFeeMilli?: number;
}

/** An endpoint that charges nothing: its requests count against the free-model rate limits. */
export function isFree(e: Pick<PricedEndpoint, "inputNano" | "outputNano">): boolean {
  return e.inputNano === 0 && e.outputNano === 0;
}

/** Parameters that only mean something when the endpoint returns reasoning. */
const REASONING_PARAMETERS = new Set(["reasoning", "include_reasoning", "reasoning_effort"]);

/**
 * The parsed catalog, indexed for the request path. Built once per catalog version. Only carriers that are
 * configured (their key is set: `configured`) serve: an endpoint of another is left out, and a model none
 * of whose carriers is configured is not listed (`models`) though still known (`model`), so a request for
 * it is told no carrier can serve it now.
 */
export class Catalog {
  /** The models listed: those with at least one configured carrier. */
  readonly models: ModelEntry[];
  readonly providers: ProviderEntry[];
  private readonly byId = new Map<string, ModelEntry>();
  /** Each alias's model (the schema keeps aliases unique and apart from ids). */
  private readonly byAlias = new Map<string, ModelEntry>();
  private readonly providerBySlug = new Map<string, ProviderEntry>();
  private readonly endpointsById = new Map<string, PricedEndpoint[]>();
  private readonly partTokensById = new Map<string, PartTokens>();

  constructor(
    readonly file: CatalogFile,
    configured: (slug: string) => boolean = () => true,
  ) {
    this.providers = file.providers;
    for (const p of file.providers) this.providerBySlug.set(p.slug, p);
    for (const m of file.models) {
      this.byId.set(m.id, m);
      for (const a of m.aliases ?? []) this.byAlias.set(a, m);
      const partTokens: PartTokens = {
        image: m.image_tokens ?? DEFAULT_PART_TOKENS,
        file: m.file_tokens ?? DEFAULT_PART_TOKENS,
        audio: m.audio_tokens ?? DEFAULT_PART_TOKENS,
        video: m.video_tokens ?? DEFAULT_PART_TOKENS,
      };
      const mediaRates: MediaRates = {
        imageTokens: partTokens.image,
        imageTiles: m.image_tiles
          ? { tilePx: m.image_tiles.tile_px, tokensPerTile: m.image_tiles.tokens_per_tile, smallPx: m.image_tiles.small_px ?? null }
          : null,
        filePageTokens: m.file_page_tokens ?? null,
        audioTokensPerSecond: m.audio_tokens_per_second ?? null,
        videoTokensPerSecond: m.video_tokens_per_second ?? null,
      };
      this.partTokensById.set(m.id, partTokens);
      const priced = m.endpoints
        .filter((e) => configured(e.provider))
        .map((e) => {
          const inputNano = perMillionToNanoPerToken(e.input_price_per_1m)!;
          const cacheWriteNano = e.input_cache_write_per_1m === undefined ? inputNano : perMillionToNanoPerToken(e.input_cache_write_per_1m)!;
          return {
            ...e,
            modelId: m.id,
            inputNano,
            outputNano: perMillionToNanoPerToken(e.output_price_per_1m)!,
            cacheReadNano: e.input_cache_read_per_1m === undefined ? inputNano : perMillionToNanoPerToken(e.input_cache_read_per_1m)!,
            cacheWriteNano,
            cacheWrite1hNano: e.input_cache_write_1h_per_1m === undefined ? cacheWriteNano : perMillionToNanoPerToken(e.input_cache_write_1h_per_1m)!,
            longContext: e.long_context ? longContextPrices(e.long_context) : null,
            providerEntry: this.providerBySlug.get(e.provider)!,
            partTokens,
            mediaRates,
            inputModalities: m.input_modalities,
            outputModalities: m.output_modalities,
            supportedParameters:
              e.supported_parameters ?? (e.supports_reasoning ? m.supported_parameters : m.supported_parameters.filter((p) => !REASONING_PARAMETERS.has(p))),
          };
        });
      // Cheapest first (input + output price per token); ties keep catalog order.
      priced.sort((a, b) => a.outputNano + a.inputNano - (b.outputNano + b.inputNano));
      this.endpointsById.set(m.id, priced);
    }
    this.models = file.models.filter((m) => this.endpoints(m.id).length > 0);
  }

  /**
   * The catalog from its JSON. `protocols`: the registered carrier protocols' names; a catalog that names
   * another is refused (loading always passes them: ./load.ts; a test may build a catalog without).
   */
  static parse(json: unknown, configured?: (slug: string) => boolean, protocols?: ReadonlySet<string>): Catalog {
    const file = catalogSchema.parse(json);
    const unknown = protocols ? unregisteredProtocols(file, protocols) : [];
    if (unknown.length > 0)
      throw new Error(
        `catalog: ${unknown.map((u) => `${u.path.join(".")} names the carrier protocol "${u.name}"`).join("; ")}, which is not registered (registered: ${[...protocols!].join(", ")})`,
      );
    return new Catalog(file, configured);
  }

  /** The model a request names, by id or alias; an omitted model or `router/auto` is the default model. */
  resolve(requested: string | undefined): ModelEntry | undefined {
    if (requested === undefined || requested === AUTO_MODEL) return this.byId.get(this.file.default_model);
    return this.byId.get(requested) ?? this.byAlias.get(requested);
  }

  model(id: string): ModelEntry | undefined {
    return this.byId.get(id);
  }

  provider(slug: string): ProviderEntry | undefined {
    return this.providerBySlug.get(slug);
  }

  /** The model's allowance per media part in tokens (each endpoint's `partTokens`), known whether or not a carrier of it is configured. */
  partTokens(modelId: string): PartTokens {
    return (
      this.partTokensById.get(modelId) ?? { image: DEFAULT_PART_TOKENS, file: DEFAULT_PART_TOKENS, audio: DEFAULT_PART_TOKENS, video: DEFAULT_PART_TOKENS }
    );
  }

  /** The model's endpoints at configured carriers, cheapest first (the order balancing draws from; with ROUTING_BALANCE=off, the order tried). */
  endpoints(modelId: string): PricedEndpoint[] {
    return this.endpointsById.get(modelId) ?? [];
  }
}

function longContextPrices(l: NonNullable<EndpointEntry["long_context"]>): NonNullable<TokenPrices["longContext"]> {
  const inputNano = perMillionToNanoPerToken(l.input_price_per_1m)!;
  const cacheWriteNano = l.input_cache_write_per_1m === undefined ? inputNano : perMillionToNanoPerToken(l.input_cache_write_per_1m)!;
  return {
    above: l.above_prompt_tokens,
    inputNano,
    outputNano: perMillionToNanoPerToken(l.output_price_per_1m)!,
    cacheReadNano: l.input_cache_read_per_1m === undefined ? inputNano : perMillionToNanoPerToken(l.input_cache_read_per_1m)!,
    cacheWriteNano,
    cacheWrite1hNano: l.input_cache_write_1h_per_1m === undefined ? cacheWriteNano : perMillionToNanoPerToken(l.input_cache_write_1h_per_1m)!,
  };
}

/** Where a catalog names a carrier protocol that `registered` does not hold (a carrier's or an endpoint's `protocol`), with the name. */
export function unregisteredProtocols(file: CatalogFile, registered: ReadonlySet<string>): Array<{ path: Array<string | number>; name: string }> {
  const found: Array<{ path: Array<string | number>; name: string }> = [];
  file.providers.forEach((p, i) => {
    if (p.protocol !== undefined && !registered.has(p.protocol)) found.push({ path: ["providers", i, "protocol"], name: p.protocol });
  });
  file.models.forEach((m, i) =>
    m.endpoints.forEach((e, j) => {
      if (e.protocol !== undefined && !registered.has(e.protocol)) found.push({ path: ["models", i, "endpoints", j, "protocol"], name: e.protocol });
    }),
  );
  return found;
}
