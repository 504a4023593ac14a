import { Hono } from "hono";
import type { AppEnv } from "../keys/caller";
import { reencryptByok } from "../byok/byok-store";
import { ApiError } from "../request/errors";

/** How many carrier keys one call re-encrypts: a call stays well within a Worker's subrequest and CPU limits. */
const REENCRYPT_PER_CALL = 200;

/**
 * Rotation of BYOK_ENCRYPTION_KEYS (docs/byok.md): re-encrypts the stored carrier keys not under the newest
 * version, a batch a call; `left` 0 means every key is under the newest and older versions can be removed.
 */
export const adminByokRoutes = new Hono<AppEnv>();

adminByokRoutes.post("/byok/reencrypt", async (c) => {
  const ring = c.var.settings.BYOK_ENCRYPTION_KEYS;
  if (ring.length === 0) throw new ApiError(503, "BYOK_ENCRYPTION_KEYS is not set: there is nothing to re-encrypt with.");
  const r = await reencryptByok(c.env.DB, ring, REENCRYPT_PER_CALL);
  return c.json({ version: ring[0]!.version, moved: r.moved, unreadable: r.unreadable, left: r.left, done: r.left === 0 });
});
