import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { findKeyByHash } from "../db/keys";
import { hashApiKey, looksLikeApiKey } from "../keys/api-key";
import { cachedKey } from "../keys/key-cache";
import { ApiError } from "./errors";

/**
 * Bearer-key authentication: 401 for a missing, malformed, unknown, disabled or expired key.
 * Keys are looked up by their SHA-256 hash, so the plaintext never reaches storage or logs.
 */
export const requireKey = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("authorization") ?? "";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new ApiError(401, "Missing API key: send the header `Authorization: Bearer <key>`.");
  const presented = match[1]!;
  const key = looksLikeApiKey(presented) ? await cachedKey(await hashApiKey(presented), (hash) => findKeyByHash(c.env.DB, hash)) : undefined;
  if (!key) throw new ApiError(401, "Invalid API key.");
  if (key.disabled) throw new ApiError(401, "This API key is disabled.");
  // Compared at every request: the key cache keeps the row, not the verdict.
  if (key.expiresAt !== null && key.expiresAt <= Date.now()) throw new ApiError(401, `This API key expired at ${new Date(key.expiresAt).toISOString()}.`);
  c.set("caller", { key, accountId: key.accountId });
  await next();
});

/** After `requireKey`: the key management API is for management keys only (403 for any other key). */
export const requireManagementKey = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("caller").key.isManagement)
    throw new ApiError(403, "Only management keys can perform this operation. Create a management key on the console's API keys page (Management keys).");
  await next();
});
