import { createMiddleware } from "hono/factory";
import type { ConsoleEnv } from "../console-env";
import { randomToken } from "./encoding";
import { isHttps } from "./cookies";

/**
 * Headers of every console response. The CSP allows no inline script except one carrying this
 * response's nonce, styles only from our own stylesheet, and no framing. Pages are private and
 * per-account, so nothing is cached. Forms post to this origin only, plus the origins a page names
 * (`formTargets`): browsers apply form-action to a form's redirects too.
 */
export const securityHeaders = createMiddleware<ConsoleEnv>(async (c, next) => {
  const nonce = randomToken(16);
  c.set("nonce", nonce);
  await next();
  const h = c.res.headers;
  h.set(
    "Content-Security-Policy",
    [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      "style-src 'self'",
      "img-src 'self'",
      ["form-action 'self'", ...(c.var.formTargets ?? [])].join(" "),
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
  );
  h.set("X-Frame-Options", "DENY");
  h.set("X-Content-Type-Options", "nosniff");
  h.set("Referrer-Policy", "same-origin");
  h.set("Cross-Origin-Opener-Policy", "same-origin");
  h.set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()");
  if (!h.has("Cache-Control")) h.set("Cache-Control", "no-store");
  if (isHttps(c)) h.set("Strict-Transport-Security", "max-age=31536000");
});
