import { allowed } from "../http/roles";
import { Hono, type Context } from "hono";
import type { ConsoleEnv, SignedIn } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import { PRESET_SLUG } from "../../presets/preset-config";
import {
  contentOf,
  countPresets,
  createPreset,
  deletePreset,
  findPresetVersion,
  listPresets,
  listVersions,
  savePresetVersion,
} from "../../presets/preset-store";
import { PresetPage, PresetsPage, type PresetForm } from "./page";
import { formValues, parsePresetForm } from "./preset-form";

/**
 * /settings/presets: the signed-in account's presets (docs/teams.md#presets) — list, create, view with every
 * version, save a new version, delete. Every query is scoped to the session's account; every form carries
 * the session's CSRF token and is validated here, as the API validates its body.
 */
export const presetRoutes = new Hono<ConsoleEnv>();

const NOTICES = { created: "Preset created: version 1.", saved: "Saved as a new version.", deleted: "Preset deleted." } as const;
const account = (c: Context<ConsoleEnv>): SignedIn => c.var.session!;
const notFound = (c: Context<ConsoleEnv>) => renderError(c, 404, "Preset not found", "There is no such preset in your account.");
const noticeOf = (c: Context<ConsoleEnv>) => {
  const done = c.req.query("done");
  return done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined;
};

async function listPage(c: Context<ConsoleEnv>, status: 200 | 400, extra: { form?: PresetForm; notice?: string }) {
  const s = account(c);
  const max = c.var.settings.PRESETS_PER_ACCOUNT;
  const { rows, total } = await listPresets(c.env.DB, s.accountId, 0, max);
  return render(
    c,
    <PresetsPage
      meta={await pageMeta(c, "Presets")}
      csrf={await csrfToken(s.token)}
      presets={rows.map((r) => r.preset)}
      atMax={total >= max}
      max={max}
      mayWrite={allowed(s, "presets.write")}
      {...extra}
    />,
    status,
  );
}

async function presetPage(c: Context<ConsoleEnv>, slug: string, status: 200 | 400, form?: PresetForm) {
  const s = account(c);
  const found = await findPresetVersion(c.env.DB, s.accountId, slug, null);
  if (!found?.version) return notFound(c);
  const { rows } = await listVersions(c.env.DB, found.preset.id, 0, c.var.settings.PRESET_VERSIONS_PER_PRESET);
  const latest = { values: formValues(contentOf(found.version), found.preset.name, found.preset.description), errors: {} };
  return render(
    c,
    <PresetPage
      meta={await pageMeta(c, `Preset ${slug}`)}
      csrf={await csrfToken(s.token)}
      preset={found.preset}
      versions={rows}
      form={form ?? latest}
      notice={noticeOf(c)}
      mayWrite={allowed(s, "presets.write")}
    />,
    status,
  );
}

const slugOf = (c: Context<ConsoleEnv>): string | null => {
  const slug = c.req.param("slug") ?? "";
  return PRESET_SLUG.test(slug) ? slug : null;
};

presetRoutes.get("/settings/presets", ...accountPage, (c) => listPage(c, 200, { notice: noticeOf(c) }));

presetRoutes.post("/settings/presets", ...accountForm, async (c) => {
  const form = await readForm(c);
  const { settings } = c.var;
  const parsed = parsePresetForm(form, true, settings.PRESET_MAX_BYTES);
  if ("errors" in parsed) return listPage(c, 400, { form: { values: form, errors: parsed.errors } });
  const { slug, name, description, content } = parsed.ok;
  const s = account(c);
  if ((await countPresets(c.env.DB, s.accountId)) >= settings.PRESETS_PER_ACCOUNT)
    return listPage(c, 400, { form: { values: form, errors: {}, problem: `An account can have at most ${settings.PRESETS_PER_ACCOUNT} presets.` } });
  const created = await createPreset(c.env.DB, s.accountId, slug, { name, description }, content);
  if (!created) return listPage(c, 400, { form: { values: form, errors: { slug: `You have a preset “${slug}” already: open it to save a new version.` } } });
  return c.redirect(`/settings/presets/${slug}?done=created`, 303);
});

presetRoutes.get("/settings/presets/:slug", ...accountPage, async (c) => {
  const slug = slugOf(c);
  return slug === null ? notFound(c) : presetPage(c, slug, 200);
});

presetRoutes.post("/settings/presets/:slug", ...accountForm, async (c) => {
  const slug = slugOf(c);
  if (slug === null) return notFound(c);
  const form = await readForm(c);
  const { settings } = c.var;
  const s = account(c);
  const parsed = parsePresetForm(form, false, settings.PRESET_MAX_BYTES);
  if ("errors" in parsed) return presetPage(c, slug, 400, { values: form, errors: parsed.errors });
  const found = await findPresetVersion(c.env.DB, s.accountId, slug, null);
  if (!found) return notFound(c);
  if (found.preset.latestVersion >= settings.PRESET_VERSIONS_PER_PRESET)
    return presetPage(c, slug, 400, {
      values: form,
      errors: {},
      problem: `This preset has ${found.preset.latestVersion} versions, the most one may have: delete it and create it again.`,
    });
  const { name, description, content } = parsed.ok;
  // An emptied name falls back to the slug, as on creation.
  const saved = await savePresetVersion(c.env.DB, s.accountId, slug, { name: name || slug, description }, content);
  if (!saved) return notFound(c);
  return c.redirect(`/settings/presets/${slug}?done=saved`, 303);
});

presetRoutes.post("/settings/presets/:slug/delete", ...accountForm, async (c) => {
  const slug = slugOf(c);
  if (slug === null || !(await deletePreset(c.env.DB, account(c).accountId, slug))) return notFound(c);
  return c.redirect("/settings/presets?done=deleted", 303);
});
