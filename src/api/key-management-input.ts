import * as z from "zod";
import { nanoToUsd, usdToNano } from "../catalog/money";
import { LIMIT_RESETS } from "../keys/key-budget";
import { readBodyLimited } from "../http/read-limited";
import { ApiError } from "./errors";

/**
 * The inputs of the key management API (`/keys`), validated with zod. Objects are strict: a field the
 * contract does not list is refused (400) rather than silently ignored.
 */

/** A /keys body is a few hundred bytes; anything past this is refused (413). */
const MAX_BODY_BYTES = 16 * 1024;
/** The largest limit a key may have, in USD (as in the console and the admin API). */
const MAX_LIMIT_USD = 1_000_000;

const name = z
  .string()
  .max(100, "at most 100 characters")
  .refine((s) => s.trim().length > 0, "must not be empty");

/** USD, whole nano-USD only (at most 9 decimals), or null for no limit; becomes nano-USD. */
const limit = z
  .number()
  .min(0)
  .max(MAX_LIMIT_USD)
  .refine((usd) => nanoToUsd(usdToNano(usd)) === usd, "at most 9 decimals (whole nano-USD)")
  .transform(usdToNano)
  .nullable();

const limitReset = z.enum(LIMIT_RESETS).nullable();

/** ISO 8601 in UTC ("Z" or "+00:00": the contract rejects other time zones), in the future; becomes Unix ms. */
const expiresAt = z
  .iso.datetime({ offset: true, message: "must be an ISO 8601 date-time such as 2027-12-31T23:59:59Z" })
  .refine((s) => s.endsWith("Z") || s.endsWith("+00:00"), "must be in UTC (end in Z or +00:00); other time zones are rejected")
  .transform((s) => Date.parse(s))
  .refine((ms) => ms > Date.now(), "must be in the future")
  .nullable();

export const createKeyBody = z.strictObject({
  name,
  limit: limit.optional(),
  limit_reset: limitReset.optional(),
  include_byok_in_limit: z.boolean().optional(),
  expires_at: expiresAt.optional(),
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
  })
  .refine((b) => Object.keys(b).length > 0, "give at least one of name, disabled, limit, limit_reset, include_byok_in_limit");

export const listKeysQuery = z.strictObject({
  include_disabled: z.enum(["true", "false"], "must be true or false").optional(),
  offset: z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number ≥ 0")
    .transform(Number)
    .optional(),
  workspace_id: z.uuid().optional(),
});

/** A key's hash in a path: 64 lowercase hex characters (anything else names no key). */
export const keyHash = z.string().regex(/^[0-9a-f]{64}$/);

/** Validates `input` or answers 400 naming the first problem and where it is. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length ? `\`${issue.path.join(".")}\`: ` : "";
  throw new ApiError(400, `Invalid request: ${where}${issue.message}`);
}

/** The request's JSON object: 413 over the size limit, 400 when it is not a JSON object. */
export async function readJsonObject(req: Request): Promise<Record<string, unknown>> {
  const read = await readBodyLimited(req, MAX_BODY_BYTES, { keepUnread: true });
  if (read === "too_large") throw new ApiError(413, `Request body too large: the limit is ${MAX_BODY_BYTES} bytes.`);
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch {
    throw new ApiError(400, "The request body is not valid JSON.");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new ApiError(400, "The request body must be a JSON object.");
  return json as Record<string, unknown>;
}
