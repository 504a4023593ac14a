import type { MemberRole } from "../db/schema";
import { can, PERMISSIONS, type Action } from "./permissions";
import { actionOf } from "./route-actions";

export type GateDecision = { ok: true; action: Action } | { ok: false; action: Action | undefined; message: string };

const ROLE_NAMES: Record<MemberRole, string> = { owner: "an owner", admin: "an admin", member: "a member", billing: "a billing member" };

/**
 * The one decision behind the console's and the management API's role checks (each renders a refusal in its
 * own way: a 403 page, a 403 JSON error): the matched route's action, from its table, against the role's
 * permissions. A route missing from its table is refused, never let through.
 */
export function gate(table: Readonly<Record<string, Action>>, method: string, routePath: string, role: MemberRole): GateDecision {
  const action = actionOf(table, method, routePath);
  if (!action) return { ok: false, action, message: "This action is not open to any role." };
  if (can(role, action)) return { ok: true, action };
  const allowed = (PERMISSIONS[action] as readonly MemberRole[]).join(", ");
  return { ok: false, action, message: `Your role does not allow this: you are ${ROLE_NAMES[role]}, and ${action} is for ${allowed}.` };
}
