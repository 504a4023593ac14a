import type { Guardrail, GuardrailMember } from "../db/schema";
import type { Assignment } from "../keys/guardrail-store";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const perMillion = (nano: number | null) => (nano === null ? null : nano / 1000);

/**
 * A guardrail in the contract's shape. Fields Switchyard does not enforce are shown as null (refused
 * unless null: src/api/guardrail-input.ts); `enforce_zdr` (deprecated) is the per-author flags' value when
 * they agree, else null; `max_price` is ours (OpenRouter's `provider.max_price` as a key's rule).
 */
export function presentGuardrail(g: Guardrail, workspaceId: string) {
  const zdr = [g.zdrAnthropic, g.zdrOpenai, g.zdrGoogle, g.zdrXai, g.zdrOther];
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    allowed_models: g.allowedModels,
    ignored_models: g.ignoredModels,
    allowed_providers: g.allowedProviders,
    ignored_providers: g.ignoredProviders,
    enforce_zdr: zdr.every((v) => v === zdr[0]) ? zdr[0]! : null,
    enforce_zdr_anthropic: g.zdrAnthropic,
    enforce_zdr_openai: g.zdrOpenai,
    enforce_zdr_google: g.zdrGoogle,
    enforce_zdr_xai: g.zdrXai,
    enforce_zdr_other: g.zdrOther,
    max_price:
      g.maxPromptNano === null && g.maxCompletionNano === null ? null : { prompt: perMillion(g.maxPromptNano), completion: perMillion(g.maxCompletionNano) },
    limit_usd: null,
    reset_interval: null,
    include_byok_in_budgets: false,
    content_filters: null,
    content_filter_builtins: null,
    enable_free_model_publication: null,
    enable_free_model_training: null,
    enable_paid_model_training: null,
    workspace_id: workspaceId,
    created_at: iso(g.createdAt)!,
    updated_at: iso(g.updatedAt),
  };
}

/** A key assignment in the contract's shape (`assigned_by`: null, key assignments do not keep who made them). */
export function presentAssignment(a: Assignment) {
  return {
    id: a.id,
    key_hash: a.keyHash,
    guardrail_id: a.guardrailId,
    key_name: a.key.name,
    key_label: a.key.label,
    assigned_by: null,
    created_at: iso(a.createdAt)!,
  };
}

/** A member assignment in the contract's shape: `user_id` is the member's id, `organization_id` the account's. */
export function presentMemberAssignment(a: GuardrailMember) {
  return {
    id: a.id,
    user_id: a.memberId,
    organization_id: a.accountId,
    guardrail_id: a.guardrailId,
    assigned_by: a.assignedBy,
    created_at: iso(a.createdAt)!,
  };
}
