import * as z from "zod";
import { PRESET_SLUG, checkPresetSize, presetConfig, type PresetContent } from "../../presets/preset-config";
import { ApiError } from "../../request/errors";

/**
 * The console's preset form, checked on the server as the API checks its body (src/api/preset-input.ts):
 * the config is JSON text in a textarea, validated by the same schema, a problem named by its field.
 */
export const PRESET_FORM_FIELDS = ["slug", "name", "description", "config", "system_prompt"] as const;
export type PresetFormField = (typeof PRESET_FORM_FIELDS)[number];
export type PresetFormValues = Partial<Record<PresetFormField, string>>;
export type PresetFormErrors = Partial<Record<PresetFormField, string>>;

export type ParsedPresetForm = { slug: string; name: string; description: string | null; content: PresetContent };

const slug = z.string().trim().regex(PRESET_SLUG, "A slug is 1 to 64 lowercase letters, digits and hyphens, starting and ending with a letter or digit.");
const name = z.string().trim().max(100, "Use a name of at most 100 characters.");
const description = z.string().trim().max(1000, "Use a description of at most 1000 characters.");

/** The form's values as a preset version, or the problem of each field. `withSlug`: the create form (an edit keeps its slug). */
export function parsePresetForm(form: Record<string, string>, withSlug: boolean, maxBytes: number): { ok: ParsedPresetForm } | { errors: PresetFormErrors } {
  const errors: PresetFormErrors = {};
  const s = withSlug ? slug.safeParse(form.slug ?? "") : { success: true as const, data: "" };
  if (!s.success) errors.slug = s.error.issues[0]!.message;
  const n = name.safeParse(form.name ?? "");
  if (!n.success) errors.name = n.error.issues[0]!.message;
  const d = description.safeParse(form.description ?? "");
  if (!d.success) errors.description = d.error.issues[0]!.message;
  const config = parseConfig(form.config ?? "");
  if ("error" in config) errors.config = config.error;
  if (Object.keys(errors).length || "error" in config) return { errors };
  const systemPrompt = (form.system_prompt ?? "").trim() === "" ? null : form.system_prompt!.replace(/\r\n/g, "\n");
  const content: PresetContent = { config: config.ok, systemPrompt };
  try {
    checkPresetSize(content, maxBytes);
  } catch (err) {
    if (err instanceof ApiError) return { errors: { config: err.message } };
    throw err;
  }
  const slugValue = s.success ? s.data : "";
  return { ok: { slug: slugValue, name: n.data || slugValue, description: d.data || null, content } };
}

function parseConfig(text: string): { ok: PresetContent["config"] } | { error: string } {
  let json: unknown;
  try {
    json = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { error: 'The config is not valid JSON: write an object such as {"model": "openai/gpt-oss-20b", "temperature": 0.2}.' };
  }
  const parsed = presetConfig.safeParse(json);
  if (parsed.success) return { ok: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { error: `config${issue.path.length ? "." + issue.path.join(".") : ""}: ${issue.message}` };
}

/** A version's content as the form shows it (the config pretty-printed). */
export function formValues(content: PresetContent, name: string, description: string | null): PresetFormValues {
  return { name, description: description ?? "", config: JSON.stringify(content.config, null, 2), system_prompt: content.systemPrompt ?? "" };
}
