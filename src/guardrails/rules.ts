import type { PricedEndpoint } from "../catalog/catalog";
import type { Guardrail } from "../db/schema";

/** What a guardrail rules on a request: its rows' fields that decide, without its account and times. */
export type GuardrailRules = Omit<Guardrail, "accountId" | "description" | "createdAt" | "updatedAt">;

/** The contract's rule names, as a refusal names them. */
export type RuleName =
  "allowed_models" | "ignored_models" | "allowed_providers" | "ignored_providers" | `enforce_zdr_${ZdrAuthor}` | "max_price.prompt" | "max_price.completion";

/** The authors the contract's per-author ZDR flags name; every other author is `other`. */
export type ZdrAuthor = "anthropic" | "openai" | "google" | "xai" | "other";

/** Which guardrail refused an endpoint, by which rule, and why in words. */
export type Refusal = { guardrail: { id: string; name: string }; rule: RuleName; why: string };

/** What the rules read of an endpoint: its model, carrier, prices and the carrier's data policy. */
export type RuledEndpoint = Pick<PricedEndpoint, "modelId" | "provider" | "inputNano" | "outputNano" | "longContext"> & {
  providerEntry: Pick<PricedEndpoint["providerEntry"], "data_policy">;
};

/**
 * A model pattern: an id, or with `*` standing for any characters (`anthropic/*`). Matched without a
 * RegExp (no compile per request): the text before the first `*` must start the id, the text after the
 * last must end it, and each piece between must follow in order (leftmost, which is enough for `*` alone).
 */
export function modelMatches(pattern: string, modelId: string): boolean {
  if (!pattern.includes("*")) return pattern === modelId;
  const pieces = pattern.split("*");
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (!modelId.startsWith(first)) return false;
  let at = first.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const found = modelId.indexOf(pieces[i]!, at);
    if (found < 0) return false;
    at = found + pieces[i]!.length;
  }
  return modelId.length - last.length >= at && modelId.endsWith(last);
}

/** The ZDR flag that covers a model: by its author, the part of its id before `/` (`x-ai` is xAI). */
export function zdrAuthor(modelId: string): ZdrAuthor {
  const author = modelId.slice(0, modelId.indexOf("/") >>> 0); // no "/": the whole id
  if (author === "anthropic" || author === "openai" || author === "google") return author;
  return author === "x-ai" ? "xai" : "other";
}

const ZDR_COLUMN = { anthropic: "zdrAnthropic", openai: "zdrOpenai", google: "zdrGoogle", xai: "zdrXai", other: "zdrOther" } as const;

/** Whether a guardrail enforces zero data retention on a model (by its author's flag). */
export function enforcesZdr(g: Pick<GuardrailRules, (typeof ZDR_COLUMN)[ZdrAuthor]>, modelId: string): boolean {
  return g[ZDR_COLUMN[zdrAuthor(modelId)]];
}

/**
 * Zero data retention, as a carrier declares it in the catalog (`data_policy`): it neither retains nor
 * trains on prompts. A carrier that declares nothing is not trusted with it.
 */
export function keepsNoData(e: RuledEndpoint): boolean {
  const p = e.providerEntry.data_policy;
  return p !== undefined && !p.retains_prompts && !p.trains_on_prompts;
}

/** USD per 1M tokens of a price in nano-USD per token, as the contract's prices read. */
const perMillion = (nano: number) => `$${nano / 1000}`;

/** The highest price an endpoint may charge per token of a kind: its long-prompt tier's, when higher. */
const highest = (e: RuledEndpoint, kind: "inputNano" | "outputNano") => Math.max(e[kind], e.longContext?.[kind] ?? 0);

/** Why one guardrail refuses an endpoint (its first rule that does, in the contract's field order), or null. */
export function refusalOf(e: RuledEndpoint, g: GuardrailRules): Refusal | null {
  const refuse = (rule: RuleName, why: string): Refusal => ({ guardrail: { id: g.id, name: g.name }, rule, why });
  if (g.allowedModels && !g.allowedModels.some((p) => modelMatches(p, e.modelId)))
    return refuse("allowed_models", `model ${e.modelId} is not among its allowed models (${g.allowedModels.join(", ")})`);
  const ignored = g.ignoredModels?.find((p) => modelMatches(p, e.modelId));
  if (ignored !== undefined) return refuse("ignored_models", `model ${e.modelId} is among its ignored models (${ignored})`);
  if (g.allowedProviders && !g.allowedProviders.includes(e.provider))
    return refuse("allowed_providers", `carrier ${e.provider} is not among its allowed providers (${g.allowedProviders.join(", ")})`);
  if (g.ignoredProviders?.includes(e.provider)) return refuse("ignored_providers", `carrier ${e.provider} is among its ignored providers`);
  const author = zdrAuthor(e.modelId);
  if (g[ZDR_COLUMN[author]] && !keepsNoData(e))
    return refuse(
      `enforce_zdr_${author}`,
      `carrier ${e.provider} does not declare zero data retention for ${e.modelId} (its data policy retains or trains on prompts, or is not declared)`,
    );
  const prompt = highest(e, "inputNano");
  if (g.maxPromptNano !== null && prompt > g.maxPromptNano)
    return refuse(
      "max_price.prompt",
      `carrier ${e.provider} charges ${perMillion(prompt)} per 1M prompt tokens for ${e.modelId}, above its ${perMillion(g.maxPromptNano)}`,
    );
  const completion = highest(e, "outputNano");
  if (g.maxCompletionNano !== null && completion > g.maxCompletionNano)
    return refuse(
      "max_price.completion",
      `carrier ${e.provider} charges ${perMillion(completion)} per 1M completion tokens for ${e.modelId}, above its ${perMillion(g.maxCompletionNano)}`,
    );
  return null;
}

/** Whether a key carrying `rules` may use an endpoint: null when every guardrail allows it, else the first refusal. */
export function allowed(e: RuledEndpoint, rules: readonly GuardrailRules[]): Refusal | null {
  for (const g of rules) {
    const refusal = refusalOf(e, g);
    if (refusal) return refusal;
  }
  return null;
}

/** The endpoints a key carrying `rules` may use (all of them without guardrails). */
export function allowedEndpoints<E extends RuledEndpoint>(endpoints: readonly E[], rules: readonly GuardrailRules[]): E[] {
  return rules.length === 0 ? [...endpoints] : endpoints.filter((e) => allowed(e, rules) === null);
}

/**
 * The message of a 403 for a request none of whose endpoints the key's guardrails allow: every distinct
 * refusal (which guardrail, which rule, why), at most `max` of them.
 */
export function refusedMessage(refusals: readonly Refusal[], max = 5): string {
  const lines = [...new Set(refusals.map((r) => `guardrail "${r.guardrail.name}" (${r.guardrail.id}), rule ${r.rule}: ${r.why}`))];
  const shown = lines.slice(0, max).join("; ");
  const more = lines.length > max ? `; and ${lines.length - max} more` : "";
  return `This key's guardrails forbid this request: ${shown}${more}. GET /api/v1/models/user lists what this key may use.`;
}
