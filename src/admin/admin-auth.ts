import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../keys/caller";
import { ApiError } from "../request/errors";
import { constantTimeEqual } from "../keys/constant-time";

/** The admin API answers only to `Authorization: Bearer <ADMIN_TOKEN>`; with no token configured, to no one. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.var.settings.ADMIN_TOKEN;
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
  if (!expected || !presented || !(await constantTimeEqual(presented, expected))) throw new ApiError(401, "Admin token required.");
  await next();
});
