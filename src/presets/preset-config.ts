import * as z from "zod";
import { ApiError } from "../request/errors";
import { providerPreferences } from "../request/provider-preferences";
import { MAX_FALLBACK_MODELS } from "../request/router-field-schemas";
import { standardParametersShape } from "../request/standard-parameters";

/**
 * What a preset version applies (docs/teams.md#presets): a model or models, provider preferences and the
 * standard parameters that shape an answer, each checked as the request's own field is. Strict: a field
 * not listed here is refused (400 naming it), never kept silently nor dropped.
 */

/** `@preset/<slug>` names a preset; a slug is lowercase letters, digits and hyphens (as OpenRouter's). */
export const PRESET_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const PRESET_MODEL_PREFIX = "@preset/";

const p = standardParametersShape;
/** The parameters a preset may set: those that shape the answer (not a request's own tools' state, stream options or metadata). */
const PARAMETERS = {
  temperature: p.temperature,
  top_p: p.top_p,
  top_k: p.top_k,
  min_p: p.min_p,
  top_a: p.top_a,
  frequency_penalty: p.frequency_penalty,
  presence_penalty: p.presence_penalty,
  repetition_penalty: p.repetition_penalty,
  seed: p.seed,
  stop: p.stop,
  logit_bias: p.logit_bias,
  response_format: p.response_format,
  reasoning: p.reasoning,
  reasoning_effort: p.reasoning_effort,
  service_tier: p.service_tier,
  max_tokens: z.int().positive().optional(),
};

/** The parameters' names, in the order a merge fills them. */
export const PRESET_PARAMETERS = Object.keys(PARAMETERS) as (keyof typeof PARAMETERS)[];

const modelId = z
  .string()
  .min(1, "must be a non-empty model id")
  .max(256)
  .refine((m) => !m.startsWith(PRESET_MODEL_PREFIX), "a preset cannot name another preset");

export const presetConfig = z.strictObject({
  model: modelId.optional(),
  models: z
    .array(modelId)
    .min(1, "`models` must list at least one model")
    .max(MAX_FALLBACK_MODELS, `at most ${MAX_FALLBACK_MODELS} models are accepted`)
    .optional(),
  provider: providerPreferences,
  ...PARAMETERS,
});

export type PresetConfig = z.infer<typeof presetConfig>;

/** What one version holds: its config and its system prompt (null: none). */
export type PresetContent = { config: PresetConfig; systemPrompt: string | null };

/** Whether a request's model names a preset (`@preset/…`): only then is anything looked up. */
export const isPresetModel = (model: string | undefined): boolean => model?.startsWith(PRESET_MODEL_PREFIX) === true;

/** A preset named by a request's model: its slug, and the version asked for (null: the latest). */
export type PresetRef = { slug: string; version: number | null };

/**
 * The preset a model id names (`@preset/<slug>` or `@preset/<slug>@<n>`), null when it names none;
 * a malformed one is `invalid` with why.
 */
export function presetRef(model: string | undefined): PresetRef | { invalid: string } | null {
  if (model === undefined || !model.startsWith(PRESET_MODEL_PREFIX)) return null;
  const rest = model.slice(PRESET_MODEL_PREFIX.length);
  const at = rest.indexOf("@");
  const slug = at < 0 ? rest : rest.slice(0, at);
  const version = at < 0 ? null : rest.slice(at + 1);
  if (!PRESET_SLUG.test(slug))
    return {
      invalid: `\`${model}\` names no preset: a preset's slug is 1 to 64 lowercase letters, digits and hyphens (\`@preset/<slug>\` or \`@preset/<slug>@<version>\`).`,
    };
  if (version !== null && !/^[1-9]\d{0,8}$/.test(version))
    return { invalid: `\`${model}\`: a preset's version is a whole number from 1 (\`@preset/${slug}@1\`).` };
  return { slug, version: version === null ? null : Number(version) };
}

/** A version's content over PRESET_MAX_BYTES is refused (413), whichever way it came (API or console). */
export function checkPresetSize(content: PresetContent, maxBytes: number): void {
  const bytes = new TextEncoder().encode(JSON.stringify({ config: content.config, system_prompt: content.systemPrompt })).length;
  if (bytes > maxBytes) throw new ApiError(413, `A preset version is at most ${maxBytes} bytes (its config and system prompt as JSON); this one is ${bytes}.`);
}
