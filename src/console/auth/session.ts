import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { ConsoleEnv } from "../console-env";
import { clearCookie, readCookie, writeCookie } from "../http/cookies";
import { createSession, deleteSession, findSession, SESSION_TTL_MS } from "./session-store";

export const SESSION_COOKIE = "sy_session";
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Sets `session` from the cookie: the signed-in member (and their account and role), or null. A stale cookie is cleared. */
export const loadSession = createMiddleware<ConsoleEnv>(async (c, next) => {
  const token = readCookie(c, SESSION_COOKIE);
  const found = token !== undefined && TOKEN_PATTERN.test(token) ? await findSession(c.env.DB, token) : undefined;
  c.set("session", found && token ? { ...found, token } : null);
  if (token !== undefined && !found) clearCookie(c, SESSION_COOKIE);
  await next();
});

/** Pages and forms of a signed-in account: anyone else is sent to sign in (and back here after, for a page). */
export const requireSession = createMiddleware<ConsoleEnv>(async (c, next) => {
  if (!c.var.session) {
    const next = c.req.method === "GET" ? `?next=${encodeURIComponent(c.req.path)}` : "";
    return c.redirect(`/sign-in${next}`, 303);
  }
  await next();
});

export async function startSession(c: Context<ConsoleEnv>, member: { accountId: string; memberId: string }): Promise<void> {
  writeCookie(c, SESSION_COOKIE, await createSession(c.env.DB, member), SESSION_TTL_MS / 1000);
}

export async function endSession(c: Context<ConsoleEnv>): Promise<void> {
  const s = c.var.session;
  if (s) await deleteSession(c.env.DB, s.token);
  clearCookie(c, SESSION_COOKIE);
}

/** Where to go after signing in: only the console's own signed-in pages (no open redirect). */
export function safeNext(next: string | undefined): string {
  return next && /^\/(settings\/(keys|credits|presets|members|audit)|activity)$/.test(next) ? next : "/settings/keys";
}
