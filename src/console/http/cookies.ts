import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

/**
 * Console cookies: HttpOnly, SameSite=Lax, Path=/. Over https they are also Secure and take the
 * `__Host-` prefix (bound to this exact origin, no Domain); plain http (local runs) cannot.
 */
export function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

function cookieName(c: Context, base: string): string {
  return isHttps(c) ? `__Host-${base}` : base;
}

export function readCookie(c: Context, base: string): string | undefined {
  return getCookie(c, cookieName(c, base));
}

/** Sets a cookie; without `maxAgeSeconds` it lasts until the browser closes. */
export function writeCookie(c: Context, base: string, value: string, maxAgeSeconds?: number): void {
  setCookie(c, cookieName(c, base), value, {
    httpOnly: true,
    sameSite: "Lax",
    secure: isHttps(c),
    path: "/",
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  });
}

export function clearCookie(c: Context, base: string): void {
  deleteCookie(c, cookieName(c, base), { path: "/", secure: isHttps(c), httpOnly: true, sameSite: "Lax" });
}
