import { securityHeaders } from "./security-headers";
import { formBodyLimit } from "./form";
import { loadSession, requireSession } from "../auth/session";
import { requireCsrf } from "../auth/csrf";
import { requireRole } from "./roles";

/**
 * The middleware of each kind of console route, listed per route (never `use("*")`: the console is
 * mounted at "/" beside the API, and none of this may run on the API's request path).
 */
export const publicPage = [securityHeaders, loadSession] as const;
/** Pages of a signed-in member: the route's action must be one their role may (src/members/route-actions.ts). */
export const accountPage = [securityHeaders, loadSession, requireSession, requireRole] as const;
/** Sign-in and sign-up forms: a pre-session CSRF token. */
export const publicForm = [securityHeaders, loadSession, formBodyLimit, requireCsrf("pre-session")] as const;
/** Forms of a signed-in account: the session's CSRF token. */
export const accountForm = [securityHeaders, loadSession, requireSession, formBodyLimit, requireCsrf("session"), requireRole] as const;
