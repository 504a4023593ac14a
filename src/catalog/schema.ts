import * as z from "zod";
import { perMillionToNanoPerToken } from "./money";

/** A price in USD per 1M tokens, exact to the nano-USD per token (at most 3 decimals). */
const pricePerMillion = z
  .number()
  .nonnegative()
  .refine((p) => perMillionToNanoPerToken(p) !== undefined, "price per 1M tokens must have at most 3 decimals");

const slug = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/);

/** The id that asks the router to choose (the catalog's default model); no alias may take it. */
export const AUTO_MODEL = "router/auto";

/**
 * The name of a carrier protocol (a carrier's or an endpoint's `protocol`): one registered in
 * src/protocols/outbound/index.ts. The catalog is read below the protocols' layer, so here it is only a
 * name's shape; loading a catalog refuses a name the registry does not hold (./load.ts, from its callers).
 */
export const carrierProtocolName = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, "a carrier protocol's name: lower-case letters, digits and dashes");
/** How a carrier takes its API key: `Authorization: Bearer`, Anthropic's `x-api-key`, Google's `x-goog-api-key`. */
export const CARRIER_AUTH_NAMES = ["bearer", "x-api-key", "x-goog-api-key"] as const;
export type CarrierAuthName = (typeof CARRIER_AUTH_NAMES)[number];

/** A carrier: an upstream provider, the protocol it speaks and how it takes its key. */
export const providerSchema = z.object({
  slug,
  name: z.string().min(1),
  /** The carrier's wire protocol; absent: the registry's default, OpenAI Chat Completions (src/protocols/outbound/index.ts). */
  protocol: carrierProtocolName.optional(),
  /** How the key is sent; default: the protocol's own (bearer, x-api-key for anthropic-messages, x-goog-api-key for gemini). */
  auth: z.enum(CARRIER_AUTH_NAMES).optional(),
  /** Anthropic Messages carriers: the `anthropic-beta` flags a caller may have forwarded to it (others are dropped, never a failure). */
  betas: z.array(z.string().min(1).max(100)).optional(),
  /**
   * The protocol's base URL: OpenAI-compatible ones end in their version (`…/v1`, requests go to
   * `${base_url}/chat/completions`); Anthropic's and Gemini's are the host (`${base_url}/v1/messages`,
   * `${base_url}/v1beta/models/{model}:generateContent`). Always https: the carrier's API key and every
   * prompt travel on it. (Only the local CARRIER_BASE_URL_OVERRIDE may be http.)
   */
  base_url: z.url({ protocol: /^https$/, error: "a carrier base_url must be an https:// URL" }),
  headquarters: z.string().length(2).nullable(),
  datacenters: z.array(z.string().length(2)),
  privacy_policy_url: z.url().nullable(),
  terms_of_service_url: z.url().nullable(),
  status_page_url: z.url().nullable(),
  /**
   * What the carrier does with prompts, from its terms: `provider.data_collection: "deny"` keeps only
   * carriers that neither retain nor train; `provider.zdr: true` only zero-data-retention ones. Absent =
   * unknown, and such a carrier passes neither filter.
   */
  data_policy: z.object({ retains_prompts: z.boolean(), trains_on_prompts: z.boolean(), zdr: z.boolean().default(false) }).optional(),
});

/** One carrier serving one model. */
export const endpointSchema = z.object({
  provider: slug,
  /** The model id the carrier expects in its own API. */
  upstream_model: z.string().min(1),
  /**
   * The protocol this model is called in when it is not its carrier's (same base URL, key and records):
   * OpenAI's GPT-6.1 Sol takes tools with reasoning only on the Responses API (`openai-responses`).
   */
  protocol: carrierProtocolName.optional(),
  input_price_per_1m: pricePerMillion,
  output_price_per_1m: pricePerMillion,
  /** Price of a prompt token read from the carrier's cache (default: the input price, no discount). */
  input_cache_read_per_1m: pricePerMillion.optional(),
  /** Price of a prompt token written to the cache (Anthropic: 5-minute entries; default: the input price). */
  input_cache_write_per_1m: pricePerMillion.optional(),
  /** Price of a prompt token written to a 1-hour cache entry (Anthropic `ttl: "1h"`; default: the 5-minute write price). */
  input_cache_write_1h_per_1m: pricePerMillion.optional(),
  context_length: z.int().positive(),
  max_completion_tokens: z.int().positive().nullable(),
  quantization: z.string().nullable(),
  supports_reasoning: z.boolean().default(false),
  /**
   * The carrier's `max_tokens` / `max_completion_tokens` caps only the visible completion: reasoning is
   * billed on top of it, bounded by the request's reasoning budget (`reasoning.max_tokens`). The hold
   * then covers cap + budget (the whole context without a budget).
   */
  reasoning_beyond_cap: z.boolean().default(false),
  /**
   * OpenAI's reasoning-model rules (o-series, GPT-5): the completion cap goes as `max_completion_tokens`,
   * reasoning as `reasoning_effort` (from `reasoning.effort`), never as OpenRouter's `reasoning` object.
   */
  reasoning_model_rules: z.boolean().default(false),
  /**
   * Prices for a long prompt (Gemini 2.5 Pro above 200K tokens): a request whose prompt has more than
   * `above_prompt_tokens` tokens is billed wholly at these (cache prices not named here: this tier's input price).
   */
  long_context: z
    .object({
      above_prompt_tokens: z.int().positive(),
      input_price_per_1m: pricePerMillion,
      output_price_per_1m: pricePerMillion,
      input_cache_read_per_1m: pricePerMillion.optional(),
      /** Cache writes above the threshold (Anthropic's Haiku 5.5, OpenAI's GPT-6.1 Sol price them too); default: this tier's input price. */
      input_cache_write_per_1m: pricePerMillion.optional(),
      /** 1-hour cache writes above the threshold; default: this tier's cache write price. */
      input_cache_write_1h_per_1m: pricePerMillion.optional(),
    })
    .optional(),
  /** The parameters this carrier honours (`provider.require_parameters`); default: the model's. */
  supported_parameters: z.array(z.string()).optional(),
  /*
   * What newer reasoning models changed on the wire (Claude Opus 5.5 and Fable 5.1, GPT-6 Astra and 6.1 Sol,
   * Gemini 3): read by the carrier adapters (src/protocols/outbound/), played by the simulator; docs/api/messages.md.
   */
  /**
   * Thinking cannot be turned off and takes no budget (the carrier refuses "disabled" and a fixed budget with
   * a 400): the adapter sends the carrier's adaptive form with an effort, and a request turning reasoning off
   * goes at the lowest effort, named in the answer's metadata (`provider.require_parameters` routes around it).
   */
  thinking_always_on: z.boolean().optional(),
  /**
   * A forced tool choice (`required` or a named function) is refused by the carrier while it thinks: the
   * adapter sends `auto` instead, named in the answer's metadata (`provider.require_parameters` routes around it).
   */
  refuses_forced_tool_choice: z.boolean().optional(),
  /**
   * Signed thinking is bound to the model that produced it: the carrier verifies only its own model's
   * signatures, so the adapter passes on only the signed blocks this endpoint's model produced, and gives
   * others' thinking as plain text (their signatures never reach it). Gemini 3 (which also requires a
   * signature on a turn's function calls): calls without one of its own carry Google's skip-validation one.
   */
  thinking_bound_to_model: z.boolean().optional(),
});

/** A name a request may use for a model besides its id: the provider's native id or a dated snapshot (`claude-haiku-4-5-20251001`, `gpt-6.1-sol`). */
const alias = z
  .string()
  .max(100)
  .regex(/^[a-z0-9][a-z0-9._\/-]*$/, "an alias is lower-case letters, digits, '.', '_', '-' and '/'");

/** A published page a model's prices and facts were read from, and the day they were read (`npm run catalog -- check` requires one on first-party models). */
export const modelSourceSchema = z.object({ url: z.url({ protocol: /^https$/ }), read_on: z.iso.date() });

export const modelSchema = z.object({
  /** `<author>/<slug>` optionally followed by a `:free` or `:batch` variant suffix. */
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*(:[a-z]+)?$/),
  /** Other names a request may use for this model (served, billed and recorded as the model's id); unique across the catalog. */
  aliases: z.array(alias).optional(),
  /** Where the model's prices and facts come from (docs/catalog.md, Updating). */
  sources: z.array(modelSourceSchema).min(1).optional(),
  canonical_slug: z.string().min(1),
  hugging_face_id: z.string().nullable(),
  name: z.string().min(1),
  description: z.string(),
  /** Release date, Unix seconds. */
  created: z.int().positive(),
  context_length: z.int().positive(),
  input_modalities: z.array(z.string()).min(1),
  output_modalities: z.array(z.string()).min(1),
  tokenizer: z.string(),
  instruct_type: z.string().nullable(),
  supported_parameters: z.array(z.string()),
  /** ISO date (YYYY-MM-DD) or null when unknown. */
  knowledge_cutoff: z.iso.date().nullable(),
  /**
   * The most one image part is billed as (the carrier scales larger images down to it): what the hold
   * counts an image as, and the estimate when a carrier reports no usage; default 1,600.
   */
  image_tokens: z.int().positive().optional(),
  /**
   * A carrier that tiles images instead (Gemini 2.x: 258 tokens an image up to 384 px, else 258 per
   * 768-px tile, with no most): an image carried inline is held at its tiles, by its own pixel size.
   */
  image_tiles: z.object({ tile_px: z.int().positive(), tokens_per_tile: z.int().positive(), small_px: z.int().positive().optional() }).optional(),
  /** The estimate's count of one `file` part, one `input_audio` part, one `video_url` part when a carrier reports no usage; required when `input_modalities` lists file, audio or video. */
  file_tokens: z.int().positive().optional(),
  audio_tokens: z.int().positive().optional(),
  video_tokens: z.int().positive().optional(),
  /**
   * What the hold counts a measured part as, at the carrier's published rates (docs/money.md, Media):
   * tokens per page of a PDF, per second of audio, per second of video. Required with the modality.
   */
  file_page_tokens: z.int().positive().optional(),
  audio_tokens_per_second: z.int().positive().optional(),
  video_tokens_per_second: z.int().positive().optional(),
  endpoints: z.array(endpointSchema).min(1),
});

/** The rate each measured kind of part is held at. */
const RATE_FIELDS = { file: "file_page_tokens", audio: "audio_tokens_per_second", video: "video_tokens_per_second" } as const;

export const catalogSchema = z
  .object({
    /** The model `router/auto` (and an omitted `model`) resolves to. */
    default_model: z.string(),
    providers: z.array(providerSchema).min(1),
    models: z.array(modelSchema).min(1),
  })
  .superRefine((cat, ctx) => {
    // Each issue names where it is (path), so `npm run catalog -- check` can name the line to fix.
    const issue = (path: Array<string | number>, message: string) => ctx.addIssue({ code: "custom", path, message });
    const providers = new Set<string>();
    cat.providers.forEach((p, i) => {
      if (providers.has(p.slug)) issue(["providers", i, "slug"], `duplicate carrier ${p.slug}`);
      providers.add(p.slug);
    });
    const ids = new Set<string>();
    cat.models.forEach((m, i) => {
      if (ids.has(m.id)) issue(["models", i, "id"], `duplicate model ${m.id}`);
      // A part a carrier bills must be held for and estimated: a model taking files, audio or video gives its rates.
      for (const kind of ["file", "audio", "video"] as const) {
        if (m.input_modalities.includes(kind) && m[`${kind}_tokens`] === undefined)
          issue(
            ["models", i, "input_modalities"],
            `${m.id}: input_modalities lists ${kind}, so ${kind}_tokens (the tokens one ${kind} part is estimated as) is required`,
          );
        const rate = RATE_FIELDS[kind];
        if (m.input_modalities.includes(kind) && m[rate] === undefined)
          issue(
            ["models", i, "input_modalities"],
            `${m.id}: input_modalities lists ${kind}, so ${rate} (the carrier's published rate the hold uses) is required`,
          );
      }
      ids.add(m.id);
      m.endpoints.forEach((e, j) => {
        if (!providers.has(e.provider)) issue(["models", i, "endpoints", j, "provider"], `${m.id}: unknown provider ${e.provider}`);
        // A `:free` variant is free at every carrier: it is billed nothing and rate-limited as free (a request whose every candidate endpoint is priced 0).
        if (m.id.endsWith(":free") && (e.input_price_per_1m !== 0 || e.output_price_per_1m !== 0))
          issue(
            ["models", i, "endpoints", j, e.input_price_per_1m !== 0 ? "input_price_per_1m" : "output_price_per_1m"],
            `${m.id}: a :free model must be priced 0 at ${e.provider}`,
          );
      });
    });
    if (!ids.has(cat.default_model)) issue(["default_model"], `default_model ${cat.default_model} is not in the catalog`);
    // An alias names one model: never another model's id, another alias, nor the router's own `router/auto`.
    const aliasOf = new Map<string, string>();
    cat.models.forEach((m, i) =>
      (m.aliases ?? []).forEach((a, j) => {
        const taken =
          a === AUTO_MODEL ? "the router's auto model" : ids.has(a) ? `the model ${a}` : aliasOf.has(a) ? `an alias of ${aliasOf.get(a)}` : undefined;
        if (taken !== undefined) issue(["models", i, "aliases", j], `${m.id}: alias ${a} is already ${taken}`);
        else aliasOf.set(a, m.id);
      }),
    );
  });

export type CatalogFile = z.infer<typeof catalogSchema>;
export type ProviderEntry = z.infer<typeof providerSchema>;
export type ModelEntry = z.infer<typeof modelSchema>;
export type EndpointEntry = z.infer<typeof endpointSchema>;
