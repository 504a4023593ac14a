import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { ConsoleEnv } from "../console-env";
import { constantTimeEqual } from "../../keys/constant-time";
import { randomToken } from "../http/encoding";
import { CSRF_FIELD, csrfToken } from "./csrf-token";
import { readCookie, writeCookie } from "../http/cookies";
import { readForm } from "../http/form";
import { renderError } from "../layout/render";

/**
 * CSRF protection for every console form POST, two layers:
 * 1. the form carries a token derived from a secret only the browser's HttpOnly cookie holds (the
 *    session token when signed in; a pre-session token for sign-in and sign-up), checked in
 *    constant time, so another site cannot forge it;
 * 2. a request whose Origin is another origin, or that the browser marks cross-site, is refused.
 */
export const PRE_SESSION_COOKIE = "sy_pre";

/** The pre-session token for the sign-in and sign-up forms, created (and set as a cookie) if missing. */
export function ensurePreSessionToken(c: Context<ConsoleEnv>): string {
  const existing = readCookie(c, PRE_SESSION_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  writeCookie(c, PRE_SESSION_COOKIE, token, 24 * 3600);
  return token;
}

function sameOrigin(c: Context): boolean {
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== new URL(c.req.url).origin) return false;
  const site = c.req.header("sec-fetch-site");
  return site === undefined || site === "same-origin" || site === "none";
}

/** Refuses (403) a form POST without a valid token; `seed` says which secret the form's token comes from. */
export function requireCsrf(seed: "session" | "pre-session") {
  return createMiddleware<ConsoleEnv>(async (c, next) => {
    const secret = seed === "session" ? c.var.session?.token : readCookie(c, PRE_SESSION_COOKIE);
    const presented = (await readForm(c))[CSRF_FIELD];
    const ok = sameOrigin(c) && secret !== undefined && presented !== undefined && (await constantTimeEqual(presented, await csrfToken(secret)));
    if (!ok)
      return renderError(
        c,
        403,
        "This form has expired",
        "The form was not accepted: it came from another site, or the page was open too long. Go back, reload the page and try again.",
      );
    await next();
  });
}
