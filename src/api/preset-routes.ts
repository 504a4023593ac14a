import { Hono, type Context } from "hono";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import { workspaceId } from "../keys/workspace-id";
import { ApiError } from "../request/errors";
import { checkPresetSize, type PresetContent } from "../presets/preset-config";
import { contentOf, countPresets, createPreset, deletePreset, findPresetVersion, listPresets, listVersions, savePresetVersion } from "../presets/preset-store";
import { presentPreset, presentPresetWithVersion, presentVersion } from "../presets/present-preset";
import { createPresetBody, pageQuery, parsePresetInput, readPresetBody, slug as slugSchema, updatePresetBody, versionParam } from "./preset-input";

/**
 * The presets API (docs/teams.md#presets): OpenRouter's paths and shapes where its contract defines them
 * (list, get, list versions, get a version), and create (POST), save a new version (PATCH) and delete
 * where it defines none. Management keys only, as `/keys`; everything scoped to the key's account
 * (another account's slug is a 404, as an unknown one).
 */
export const presetRoutes = new Hono<AppEnv>();

const managementKey = [requireKey, requireManagementKey] as const;
const DEFAULT_PAGE = 50;

const notFound = (slug: string) => new ApiError(404, `Preset \`${slug}\` not found.`);
const accountOf = (c: Context<AppEnv>) => c.get("caller").accountId;

function slugParam(c: Context<AppEnv>): string {
  const slug = c.req.param("slug") ?? "";
  if (!slugSchema.safeParse(slug).success) throw notFound(slug);
  return slug;
}

/** The account's preset of the path's slug, with its latest version (or the one given); 404 when it has none. */
async function found(c: Context<AppEnv>, version: number | null = null) {
  const slug = slugParam(c);
  const row = await findPresetVersion(c.env.DB, accountOf(c), slug, version);
  if (!row) throw notFound(slug);
  if (!row.version) throw new ApiError(404, `Preset \`${slug}\` has no version ${version}: its versions are 1 to ${row.preset.latestVersion}.`);
  return { preset: row.preset, version: row.version };
}

presetRoutes.get("/presets", ...managementKey, async (c) => {
  const q = parsePresetInput(pageQuery, c.req.query());
  const accountId = accountOf(c);
  const [{ rows, total }, workspace] = await Promise.all([listPresets(c.env.DB, accountId, q.offset ?? 0, q.limit ?? DEFAULT_PAGE), workspaceId(accountId)]);
  return c.json({ data: rows.map((r) => presentPreset(r.preset, r.version.id, workspace)), total_count: total });
});

presetRoutes.post("/presets", ...managementKey, async (c) => {
  const { settings } = c.var;
  const body = parsePresetInput(createPresetBody, await readPresetBody(c.req.raw, settings.PRESET_MAX_BYTES));
  const content: PresetContent = { config: body.config, systemPrompt: body.system_prompt ?? null };
  checkPresetSize(content, settings.PRESET_MAX_BYTES);
  const accountId = accountOf(c);
  if ((await countPresets(c.env.DB, accountId)) >= settings.PRESETS_PER_ACCOUNT)
    throw new ApiError(400, `An account can have at most ${settings.PRESETS_PER_ACCOUNT} presets (PRESETS_PER_ACCOUNT); delete one to create another.`);
  const created = await createPreset(c.env.DB, accountId, body.slug, { name: body.name ?? body.slug, description: body.description ?? null }, content);
  if (!created) throw new ApiError(409, `A preset \`${body.slug}\` exists already: PATCH /api/v1/presets/${body.slug} saves a new version of it.`);
  return c.json({ data: presentPresetWithVersion(created.preset, created.version, await workspaceId(accountId)) }, 201);
});

presetRoutes.get("/presets/:slug", ...managementKey, async (c) => {
  const { preset, version } = await found(c);
  return c.json({ data: presentPresetWithVersion(preset, version, await workspaceId(preset.accountId)) });
});

// PUT is taken as PATCH (the same body and meaning), for clients that save with PUT.
presetRoutes.on(["PATCH", "PUT"], "/presets/:slug", ...managementKey, async (c) => {
  const { settings } = c.var;
  const body = parsePresetInput(updatePresetBody, await readPresetBody(c.req.raw, settings.PRESET_MAX_BYTES));
  const latest = await found(c);
  if (latest.preset.latestVersion >= settings.PRESET_VERSIONS_PER_PRESET)
    throw new ApiError(
      400,
      `Preset \`${latest.preset.slug}\` has ${latest.preset.latestVersion} versions, the most one may have (PRESET_VERSIONS_PER_PRESET): delete it and create it again.`,
    );
  // Every save is a new version: what the body leaves out is the latest version's.
  const previous = contentOf(latest.version);
  const content: PresetContent = {
    config: body.config ?? previous.config,
    systemPrompt: body.system_prompt !== undefined ? body.system_prompt : previous.systemPrompt,
  };
  checkPresetSize(content, settings.PRESET_MAX_BYTES);
  const saved = await savePresetVersion(c.env.DB, accountOf(c), latest.preset.slug, { name: body.name, description: body.description }, content);
  if (!saved) throw notFound(latest.preset.slug); // deleted meanwhile
  return c.json({ data: presentPresetWithVersion(saved.preset, saved.version, await workspaceId(saved.preset.accountId)) });
});

presetRoutes.delete("/presets/:slug", ...managementKey, async (c) => {
  const slug = slugParam(c);
  if (!(await deletePreset(c.env.DB, accountOf(c), slug))) throw notFound(slug);
  return c.json({ deleted: true as const });
});

presetRoutes.get("/presets/:slug/versions", ...managementKey, async (c) => {
  const q = parsePresetInput(pageQuery, c.req.query());
  const { preset } = await found(c);
  const { rows, total } = await listVersions(c.env.DB, preset.id, q.offset ?? 0, q.limit ?? DEFAULT_PAGE);
  return c.json({ data: rows.map((v) => presentVersion(v, preset.accountId)), total_count: total });
});

presetRoutes.get("/presets/:slug/versions/:version", ...managementKey, async (c) => {
  const parsed = versionParam.safeParse(c.req.param("version"));
  if (!parsed.success) throw new ApiError(404, `Preset \`${slugParam(c)}\` has no version \`${c.req.param("version")}\`: versions are whole numbers from 1.`);
  const { version } = await found(c, parsed.data);
  return c.json({ data: presentVersion(version, accountOf(c)) });
});
