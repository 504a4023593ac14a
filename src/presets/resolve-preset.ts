import { ApiError } from "../request/errors";
import type { ChatRequest } from "../request/chat-request";
import { presetRef } from "./preset-config";
import { cachedPresetVersion } from "./preset-cache";
import { contentOf, findPresetVersion } from "./preset-store";
import { applyPreset } from "./apply-preset";

/** The preset a request's record names: its id, slug and the version applied. */
export type PresetUsed = { id: string; slug: string; version: number };

/**
 * The request with the preset its `model` names applied (`@preset/<slug>`: the latest version;
 * `@preset/<slug>@<n>`: version n), looked up in the caller's account only, at most one D1 read
 * (the isolate's cache, `ttlMs`). A request naming no preset is returned as it is. A preset the account
 * does not have, or a version it does not have, is a 404; a malformed name a 400.
 */
export async function withPreset(
  d1: D1Database,
  accountId: string,
  body: ChatRequest,
  ttlMs: number,
): Promise<{ body: ChatRequest; preset: PresetUsed | null }> {
  const ref = presetRef(body.model);
  if (ref === null) return { body, preset: null };
  if ("invalid" in ref) throw new ApiError(400, ref.invalid);
  const found = await cachedPresetVersion(accountId, ref.slug, ref.version, ttlMs, () => findPresetVersion(d1, accountId, ref.slug, ref.version));
  if (!found) throw new ApiError(404, `Preset \`${ref.slug}\` not found: this account has no preset of that slug (GET /api/v1/presets lists them).`);
  if (!found.version) throw new ApiError(404, `Preset \`${ref.slug}\` has no version ${ref.version}: its versions are 1 to ${found.preset.latestVersion}.`);
  const { preset, version } = found;
  return { body: applyPreset(body, contentOf(version)), preset: { id: preset.id, slug: preset.slug, version: version.version } };
}
