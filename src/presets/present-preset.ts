import type { Preset, PresetVersion } from "../db/schema";
import { contentOf } from "./preset-store";

/**
 * Presets in the shapes of OpenRouter's contract (the teams extract: Preset, PresetWithDesignatedVersion,
 * PresetDesignatedVersion). The designated version is always the latest: every save designates the
 * version it makes. An account is its own creator and has one workspace (src/keys/workspace-id.ts).
 */

const iso = (ms: number) => new Date(ms).toISOString();

/** A preset without its version (`GET /presets`). */
export function presentPreset(p: Preset, designatedVersionId: string, workspaceId: string) {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    description: p.description,
    status: "active" as const,
    status_updated_at: null,
    creator_user_id: p.accountId,
    workspace_id: workspaceId,
    designated_version_id: designatedVersionId,
    // Not in the contract's Preset (which allows more fields): the number of the designated (latest) version.
    latest_version: p.latestVersion,
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
  };
}

/** One version (`GET /presets/{slug}/versions`, `…/versions/{version}`): its config and system prompt. */
export function presentVersion(v: PresetVersion, accountId: string) {
  const { config, systemPrompt } = contentOf(v);
  return {
    id: v.id,
    preset_id: v.presetId,
    version: v.version,
    config,
    system_prompt: systemPrompt,
    creator_id: accountId,
    // Versions never change: updated when created.
    created_at: iso(v.createdAt),
    updated_at: iso(v.createdAt),
  };
}

/** A preset with its designated (latest) version inline (`GET /presets/{slug}`, and what creating or saving answers). */
export function presentPresetWithVersion(p: Preset, v: PresetVersion, workspaceId: string) {
  return { ...presentPreset(p, v.id, workspaceId), designated_version: presentVersion(v, p.accountId) };
}
