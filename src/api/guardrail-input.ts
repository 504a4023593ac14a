import * as z from "zod";
import { limitParam, offsetParam } from "./page-query";
import type { Catalog } from "../catalog/catalog";
import { perMillionToNanoPerToken } from "../catalog/money";
import type { GuardrailFields } from "../keys/guardrail-store";
import type { ZdrAuthor } from "../guardrails/rules";
import { ApiError } from "../request/errors";

/**
 * The inputs of `/guardrails` in OpenRouter's shape, validated with zod. Objects are strict (an unknown
 * field is a 400), and every contract field Switchyard does not enforce is refused unless it is null or
 * left out — never accepted and ignored (docs/teams.md lists them).
 */

const list = z.array(z.string().min(1).max(200)).min(1).nullable().optional();
const flag = z.boolean().nullable().optional();

/** A field of the contract the router does not enforce: only null (no such rule) or absent is taken. */
const unenforced = (why: string) =>
  z
    .unknown()
    .refine((v) => v === null, `not enforced by Switchyard: ${why}; send null or leave it out`)
    .optional();

/** USD per 1M tokens at most 3 decimals (the catalog's precision), or null for no cap. */
const pricePerMillion = z
  .number()
  .min(0)
  .max(1_000_000)
  .refine((p) => perMillionToNanoPerToken(p) !== undefined, "at most 3 decimals (USD per 1M tokens)")
  .nullable()
  .optional();

const fields = {
  description: z.string().max(1000).nullable().optional(),
  allowed_models: list,
  ignored_models: list,
  allowed_providers: list,
  ignored_providers: list,
  enforce_zdr: flag,
  enforce_zdr_anthropic: flag,
  enforce_zdr_openai: flag,
  enforce_zdr_google: flag,
  enforce_zdr_xai: flag,
  enforce_zdr_other: flag,
  // Not in the contract's guardrail: OpenRouter's `provider.max_price` (prompt and completion, USD per 1M tokens) as a key's rule.
  max_price: z.strictObject({ prompt: pricePerMillion, completion: pricePerMillion }).nullable().optional(),
  limit_usd: unenforced("guardrail budgets (a key's own `limit` on PATCH /keys/{hash} caps its spend)"),
  reset_interval: unenforced("guardrail budgets have no reset interval (a key's own `limit_reset` does)"),
  include_byok_in_budgets: z
    .boolean()
    .refine((v) => !v, "must be false: Switchyard has no bring-your-own-key usage")
    .optional(),
  content_filters: unenforced("content filters are not applied to requests"),
  content_filter_builtins: unenforced("content filters are not applied to requests"),
  enable_free_model_publication: unenforced("carriers declare no publication policy in the catalog"),
  enable_free_model_training: unenforced("use `enforce_zdr_*`: it keeps out every carrier that retains or trains on prompts"),
  enable_paid_model_training: unenforced("use `enforce_zdr_*`: it keeps out every carrier that retains or trains on prompts"),
};

export const createGuardrailBody = z.strictObject({ name: z.string().trim().min(1).max(200), ...fields, workspace_id: z.uuid().optional() });

export const updateGuardrailBody = z
  .strictObject({ name: z.string().trim().min(1).max(200).optional(), ...fields })
  .refine((b) => Object.keys(b).length > 0, "give at least one field to change");

export const keyHashesBody = z.strictObject({ key_hashes: z.array(z.string().regex(/^[0-9a-f]{64}$/, "must be a key hash (64 hex characters)")).min(1) });

/** Member ids as `GET /organization/members` shows them ("mem_<hex>"); whether each is the account's is the route's check. */
export const memberIdsBody = z.strictObject({ member_user_ids: z.array(z.string().min(1).max(100)).min(1) });

export const pageQuery = z.strictObject({
  offset: offsetParam.optional(),
  limit: limitParam(100).optional(),
  workspace_id: z.uuid().optional(),
});

type Body = z.infer<typeof updateGuardrailBody>;

const ZDR: Record<ZdrAuthor, keyof Body & `enforce_zdr_${string}`> = {
  anthropic: "enforce_zdr_anthropic",
  openai: "enforce_zdr_openai",
  google: "enforce_zdr_google",
  xai: "enforce_zdr_xai",
  other: "enforce_zdr_other",
};
const COLUMN = { anthropic: "zdrAnthropic", openai: "zdrOpenai", google: "zdrGoogle", xai: "zdrXai", other: "zdrOther" } as const;

/**
 * A body's fields as stored, only those it sets: model entries checked against the catalog (an id or
 * alias becomes its catalog id; a pattern with `*` is kept as written), carriers must be the catalog's,
 * each author's ZDR flag falls back to `enforce_zdr` (the contract's precedence), prices become nano-USD per token.
 */
export function storedFields(body: Body, catalog: Catalog, maxItems: number): Partial<GuardrailFields> {
  const out: Partial<GuardrailFields> = {};
  if (body.name !== undefined) out.name = body.name;
  if (body.description !== undefined) out.description = body.description;
  for (const [field, column] of [
    ["allowed_models", "allowedModels"],
    ["ignored_models", "ignoredModels"],
  ] as const) {
    const v = body[field];
    if (v !== undefined) out[column] = v === null ? null : models(field, v, catalog, maxItems);
  }
  for (const [field, column] of [
    ["allowed_providers", "allowedProviders"],
    ["ignored_providers", "ignoredProviders"],
  ] as const) {
    const v = body[field];
    if (v !== undefined) out[column] = v === null ? null : carriers(field, v, catalog, maxItems);
  }
  for (const author of Object.keys(ZDR) as ZdrAuthor[]) {
    const v = body[ZDR[author]] ?? body.enforce_zdr;
    if (v !== undefined) out[COLUMN[author]] = v ?? false;
  }
  if (body.max_price !== undefined) {
    out.maxPromptNano = body.max_price?.prompt == null ? null : perMillionToNanoPerToken(body.max_price.prompt)!;
    out.maxCompletionNano = body.max_price?.completion == null ? null : perMillionToNanoPerToken(body.max_price.completion)!;
  }
  return out;
}

function bounded(field: string, v: string[], maxItems: number): string[] {
  if (v.length > maxItems) throw new ApiError(400, `Invalid request: \`${field}\`: at most ${maxItems} entries (GUARDRAIL_LIST_ITEMS).`);
  return [...new Set(v)];
}

function models(field: string, v: string[], catalog: Catalog, maxItems: number): string[] {
  return bounded(field, v, maxItems).map((id) => {
    if (id.includes("*")) return id;
    const model = catalog.resolve(id);
    if (!model || id === "router/auto")
      throw new ApiError(
        400,
        `Invalid request: \`${field}\`: model ${id} is not in the catalog (a pattern such as \`anthropic/*\` may name models by prefix).`,
      );
    return model.id;
  });
}

function carriers(field: string, v: string[], catalog: Catalog, maxItems: number): string[] {
  const unknown = bounded(field, v, maxItems).find((slug) => catalog.provider(slug) === undefined);
  if (unknown !== undefined)
    throw new ApiError(400, `Invalid request: \`${field}\`: ${unknown} is not a carrier of the catalog (GET /api/v1/providers lists them).`);
  return [...new Set(v)];
}
