import * as z from "zod";

/**
 * The request's `provider` object: the contract's `ProviderPreferences`, every field, strict
 * (`additionalProperties: false`, so an unknown key is a 400 naming it). Every field may be null,
 * as the contract allows; null means "not set".
 */

export const QUANTIZATIONS = ["int4", "int8", "fp4", "mxfp4", "nvfp4", "fp6", "fp8", "mxfp8", "fp16", "bf16", "fp32", "unknown"] as const;
const SORTS = ["price", "throughput", "latency", "exacto"] as const;

const providerList = z.array(z.string().min(1)).max(100).nullish();

/** A cutoff per percentile; all set cutoffs must be met for an endpoint to be preferred. */
const percentiles = z.strictObject({
  p50: z.number().nonnegative().nullish(),
  p75: z.number().nonnegative().nullish(),
  p90: z.number().nonnegative().nullish(),
  p99: z.number().nonnegative().nullish(),
});
/** A number is the p50 cutoff. */
const cutoff = z.union([z.number().nonnegative(), percentiles]).nullish();

/** USD: the contract types these as strings; OpenRouter's clients also send numbers. */
const usd = z.union([
  z.number().nonnegative(),
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, "must be a non-negative decimal number")
    .transform(Number),
]);

export const providerPreferences = z
  .strictObject({
    order: providerList,
    only: providerList,
    ignore: providerList,
    allow_fallbacks: z.boolean().nullish(),
    require_parameters: z.boolean().nullish(),
    data_collection: z.enum(["allow", "deny"]).nullish(),
    zdr: z.boolean().nullish(),
    enforce_distillable_text: z.boolean().nullish(),
    quantizations: z.array(z.enum(QUANTIZATIONS)).nullish(),
    sort: z.union([z.enum(SORTS), z.strictObject({ by: z.enum(SORTS).nullish(), partition: z.enum(["model", "none"]).nullish() })]).nullish(),
    max_price: z
      .strictObject({ prompt: usd.optional(), completion: usd.optional(), request: usd.optional(), image: usd.optional(), audio: usd.optional() })
      .nullish(),
    preferred_min_throughput: cutoff,
    preferred_max_latency: cutoff,
  })
  .nullish();

export type ProviderPreferences = NonNullable<z.infer<typeof providerPreferences>>;
export type Cutoff = ProviderPreferences["preferred_max_latency"];
