import * as z from "zod";
import { limitParam, offsetParam } from "./page-query";
import { PRESET_SLUG, presetConfig } from "../presets/preset-config";
import { invalidInput, readJsonObject } from "../request/json-body";

/**
 * The inputs of the presets API (`/presets`), validated with zod: strict objects (a field not listed is a
 * 400 naming it, never ignored), the config checked field by field as a request's own fields are.
 */

const name = z
  .string()
  .max(100, "at most 100 characters")
  .refine((s) => s.trim().length > 0, "must not be empty");
const description = z.string().max(1000, "at most 1000 characters").nullable();
const systemPrompt = z.string().nullable();

export const slug = z.string().regex(PRESET_SLUG, "must be 1 to 64 lowercase letters, digits and hyphens, starting and ending with a letter or digit");

/** POST /presets: a new preset and its version 1. */
export const createPresetBody = z.strictObject({
  slug,
  name: name.optional(),
  description: description.optional(),
  config: presetConfig,
  system_prompt: systemPrompt.optional(),
});

/** PATCH /presets/{slug}: a new version (config and system prompt not given are the latest version's), name and description changed as given. */
export const updatePresetBody = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    config: presetConfig.optional(),
    system_prompt: systemPrompt.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, "give at least one of name, description, config, system_prompt");

/** `?offset=&limit=` as the contract's list operations take them (limit 1 to 100, default 50). */
export const pageQuery = z.strictObject({
  offset: offsetParam.optional(),
  limit: limitParam(100).optional(),
});

/** A version number in a path: a whole number from 1 (anything else names no version: 404). */
export const versionParam = z
  .string()
  .regex(/^[1-9]\d{0,8}$/)
  .transform(Number);

export function parsePresetInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error);
}

/** The body as a JSON object: 413 over `maxBytes` (PRESET_MAX_BYTES, with room for the name and description). */
export async function readPresetBody(req: Request, maxBytes: number): Promise<Record<string, unknown>> {
  return (await readJsonObject(req, maxBytes + 4096)).json;
}
