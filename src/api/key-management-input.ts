import * as z from "zod";
import { offsetParam } from "./page-query";
import { nanoToUsd, usdToNano } from "../catalog/money";
import { LIMIT_RESETS, MAX_KEY_LIMIT_USD } from "../keys/key-budget";
import { invalidInput, readJsonObject } from "../request/json-body";

/**
 * The inputs of the key management API (`/keys`), validated with zod. Objects are strict: a field the
 * contract does not list is refused (400) rather than silently ignored.
 */

/** A /keys body is a few hundred bytes; anything past this is refused (413). */
const MAX_BODY_BYTES = 16 * 1024;

const name = z
  .string()
  .max(100, "at most 100 characters")
  .refine((s) => s.trim().length > 0, "must not be empty");

/** USD, whole nano-USD only (at most 9 decimals), or null for no limit; becomes nano-USD. */
const limit = z
  .number()
  .min(0)
  .max(MAX_KEY_LIMIT_USD)
  .refine((usd) => nanoToUsd(usdToNano(usd)) === usd, "at most 9 decimals (whole nano-USD)")
  .transform(usdToNano)
  .nullable();

const limitReset = z.enum(LIMIT_RESETS).nullable();

/** ISO 8601 in UTC ("Z" or "+00:00": the contract rejects other time zones), in the future; becomes Unix ms. */
const expiresAt = z.iso
  .datetime({ offset: true, message: "must be an ISO 8601 date-time such as 2027-12-31T23:59:59Z" })
  .refine((s) => s.endsWith("Z") || s.endsWith("+00:00"), "must be in UTC (end in Z or +00:00); other time zones are rejected")
  .transform((s) => Date.parse(s))
  .refine((ms) => ms > Date.now(), "must be in the future")
  .nullable();

/** Not in the contract: the key's requests use the answer cache without asking, kept this many seconds (docs/caching.md); null = off. */
const responseCacheTtl = z.int().min(1).max(86_400).nullable();

export const createKeyBody = z.strictObject({
  name,
  limit: limit.optional(),
  limit_reset: limitReset.optional(),
  include_byok_in_limit: z.boolean().optional(),
  expires_at: expiresAt.optional(),
  response_cache_ttl_seconds: responseCacheTtl.optional(),
  // Accepted because the contract lists them; each must name the caller's own account and workspace (no organizations, one workspace).
  creator_user_id: z.string().min(1).nullable().optional(),
  workspace_id: z.uuid().optional(),
});

export const updateKeyBody = z
  .strictObject({
    name: name.optional(),
    disabled: z.boolean().optional(),
    limit: limit.optional(),
    limit_reset: limitReset.optional(),
    include_byok_in_limit: z.boolean().optional(),
    response_cache_ttl_seconds: responseCacheTtl.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, "give at least one of name, disabled, limit, limit_reset, include_byok_in_limit, response_cache_ttl_seconds");

export const listKeysQuery = z.strictObject({
  include_disabled: z.enum(["true", "false"], "must be true or false").optional(),
  offset: offsetParam.optional(),
  workspace_id: z.uuid().optional(),
});

/** A key's hash in a path: 64 lowercase hex characters (anything else names no key). */
export const keyHash = z.string().regex(/^[0-9a-f]{64}$/);

/** Validates `input` or answers 400 naming the first problem and where it is. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error);
}

/** The request's JSON object: 413 over MAX_BODY_BYTES, 400 when it is not a JSON object. */
export async function readKeyBody(req: Request): Promise<Record<string, unknown>> {
  return (await readJsonObject(req, MAX_BODY_BYTES)).json;
}
