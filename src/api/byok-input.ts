import * as z from "zod";
import { limitParam, offsetParam } from "./page-query";

// What `/byok` takes (docs/byok.md): OpenRouter's CreateBYOKKeyRequest and UpdateBYOKKeyRequest, with
// Switchyard's `mode` and `allow_fallback`. Allow-lists are refused unless null: not enforced here.

const unsupportedList = (field: string) =>
  z.null({ error: `${field} is not supported: a carrier key serves every key and model of the account (send null or leave it out)` }).optional();

/** `is_fallback`: one key per carrier, so none is another's fallback (the platform's key is: `allow_fallback`). */
const isFallback = z
  .literal(false, { error: "is_fallback: true is not supported: an account has one key per carrier; use allow_fallback for the platform's key" })
  .optional();

const options = {
  name: z.string().trim().max(255).nullable().optional(),
  disabled: z.boolean().optional(),
  is_fallback: isFallback,
  mode: z.enum(["first", "only"]).optional(),
  allow_fallback: z.boolean().optional(),
  allowed_models: unsupportedList("allowed_models"),
  allowed_api_key_hashes: unsupportedList("allowed_api_key_hashes"),
  allowed_user_ids: unsupportedList("allowed_user_ids"),
};

/** A carrier key as sent: no surrounding whitespace, no line breaks (it goes into a header). */
const carrierKey = z
  .string()
  .min(1, "must not be empty")
  .refine((k) => k === k.trim(), "must not start or end with whitespace")
  .refine((k) => /^[\x21-\x7e]+$/.test(k), "must be printable ASCII without spaces (it is sent in a header)");

export const createByokBody = z.strictObject({
  provider: z.string().min(1),
  key: carrierKey,
  workspace_id: z.uuid().optional(),
  ...options,
});

export const updateByokBody = z
  .strictObject({ key: carrierKey.optional(), ...options })
  .refine((b) => Object.keys(b).length > 0, "give at least one field to change");

export const byokPageQuery = z.strictObject({
  offset: offsetParam.optional(),
  limit: limitParam(100).optional(),
  workspace_id: z.uuid().optional(),
  provider: z.string().min(1).optional(),
});

export type ByokBody = z.infer<typeof updateByokBody>;

/** The stored options of a body: only the fields it sets. */
export function byokOptions(b: ByokBody) {
  return {
    ...(b.name !== undefined ? { name: b.name === "" ? null : b.name } : {}),
    ...(b.disabled !== undefined ? { disabled: b.disabled } : {}),
    ...(b.mode !== undefined ? { mode: b.mode } : {}),
    ...(b.allow_fallback !== undefined ? { allowFallback: b.allow_fallback } : {}),
  };
}
