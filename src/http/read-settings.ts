import { createMiddleware } from "hono/factory";
import type { Env } from "../env";
import { settings, type Settings } from "../settings";

/**
 * The deployment's settings, read once per request before any handler (`c.var.settings`): handlers and
 * the request path take the parts they need from it, and nothing below them reads env for a number.
 */
export const readSettingsOnce = createMiddleware<{ Bindings: Env; Variables: { settings: Settings } }>(async (c, next) => {
  c.set("settings", settings(c.env));
  await next();
});
