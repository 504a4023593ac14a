import { createMiddleware } from "hono/factory";
import type { ConsoleEnv, SignedIn } from "../console-env";
import { renderError } from "../layout/render";
import { gate } from "../../members/role-gate";
import { CONSOLE_ROUTES } from "../../members/route-actions";
import { can, type Action } from "../../members/permissions";
import type { KeyScope } from "../../keys/key-store";
import type { MemberRole } from "../../db/schema";
import { audit, type Actor } from "../../members/audit-store";
import { readForm } from "./form";

/**
 * After `requireSession`: the signed-in member's current role against the route's action
 * (src/members/route-actions.ts). A forbidden page or form is a 403 page, and nothing is done.
 */
export const requireRole = createMiddleware<ConsoleEnv>(async (c, next) => {
  const s = c.var.session!;
  const decided = gate(CONSOLE_ROUTES, c.req.method, c.req.routePath, s.role);
  if (!decided.ok) return renderError(c, 403, "Not allowed", decided.message);
  await next();
  // Every administrative form that did its work (a page or a redirect, not a refusal) goes in the audit log.
  if (c.req.method === "POST" && c.res.status < 400 && decided.action !== "account.self") {
    const form = await readForm(c); // parsed once already by the handler (Hono caches the body)
    const named = AUDITED_FIELDS.filter((f) => form[f]).map((f) => `${f}=${form[f]!.slice(0, 200)}`);
    const target = [...Object.values(c.req.param()), ...named].join(" ") || null;
    await audit(c.env.DB, sessionActor(s), `${c.req.method} ${c.req.routePath}`, target);
  }
});

/** The form fields that name what an administrative form acts on (never a password, a key's secret or a token). */
const AUDITED_FIELDS = ["key", "guardrail", "slug", "name", "member", "email", "role", "invite", "amount"] as const;

/** Whether the signed-in member may do an action (to show or leave out parts of a page the gate lets them see). */
export const allowed = (s: SignedIn, action: Action) => can(s.role, action);

/** Whose keys the signed-in member sees and changes: every key of the account, or only their own. */
export const keyScopeOf = (s: SignedIn): KeyScope => (can(s.role, "keys.all") ? undefined : { memberId: s.memberId });

/** The signed-in member as the audit log names them. */
export const sessionActor = (s: SignedIn): Actor => ({ accountId: s.accountId, memberId: s.memberId, email: s.email, via: "session" });

/** Where a member lands after signing in: their keys, or (a billing member, who has none) the credits. */
export const landingOf = (role: MemberRole) => (can(role, "keys.own") ? "/settings/keys" : "/settings/credits");
