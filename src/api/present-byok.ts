import type { ByokKey } from "../db/schema";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * A carrier key in the contract's shape (`BYOKKey`), never the key: `label` shows its last four
 * characters only. Beyond the contract: `mode`, `allow_fallback`, `last4`, the carrier's last refusal of
 * the key (`last_error`, `last_error_at`) and `updated_at` (docs/byok.md).
 */
export function presentByok(k: ByokKey, workspaceId: string) {
  return {
    id: k.id,
    provider: k.provider,
    name: k.name,
    label: `...${k.last4}`,
    last4: k.last4,
    workspace_id: workspaceId,
    disabled: k.disabled,
    is_fallback: false,
    mode: k.mode,
    allow_fallback: k.allowFallback,
    allowed_models: null,
    allowed_api_key_hashes: null,
    allowed_user_ids: null,
    sort_order: 0,
    last_error: k.lastError,
    last_error_at: iso(k.lastErrorAt),
    created_at: iso(k.createdAt)!,
    updated_at: iso(k.updatedAt),
  };
}
