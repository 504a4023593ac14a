import type { MemberRole } from "../db/schema";

/**
 * What each role may do (docs/teams.md, "Members and roles"): the one table every console page and
 * management API route is checked against (src/members/route-actions.ts names each route's action).
 * Pure; `test/worker/member-permissions.test.ts` holds it row by row.
 *
 * - owner: everything, members and roles included;
 * - admin: everyone's keys, guardrails, presets, alerts, carrier keys (BYOK), trace export, all activity, invitations (of roles up to admin), the audit log;
 * - member: their own keys and the activity of their own keys; reads presets (and the catalog, public);
 * - billing: credits, payments, and spend (the activity of every key), no keys.
 */
export const PERMISSIONS = {
  "keys.own": ["owner", "admin", "member"], // list, create, change, delete the keys one made
  "keys.all": ["owner", "admin"], // every key of the account (also: whose keys a list shows)
  "keys.management": ["owner", "admin"], // management keys (they act with their maker's role)
  "guardrails.read": ["owner", "admin"],
  "guardrails.write": ["owner", "admin"],
  "presets.read": ["owner", "admin", "member"],
  "presets.write": ["owner", "admin"],
  "activity.own": ["owner", "admin", "member", "billing"], // the activity page; a member sees only their keys'
  "activity.all": ["owner", "admin", "billing"],
  "credits.read": ["owner", "admin", "billing"],
  "credits.buy": ["owner", "billing"],
  "members.read": ["owner", "admin"],
  "members.invite": ["owner", "admin"], // an admin invites admins, members and billing, never an owner
  "members.manage": ["owner"], // change a role, remove a member, invite an owner
  "audit.read": ["owner", "admin"],
  "alerts.read": ["owner", "admin"], // budget alerts: thresholds, webhook endpoints, what fired, the delivery log
  "alerts.write": ["owner", "admin"],
  "byok.read": ["owner", "admin"], // the account's own carrier keys (docs/byok.md): last four characters, mode, last error
  "byok.write": ["owner", "admin"],
  "observability.read": ["owner", "admin"], // trace export destinations and their delivery log (docs/observability.md)
  "observability.write": ["owner", "admin"],
  "account.self": ["owner", "admin", "member", "billing"], // one's own password, signing out
} as const satisfies Record<string, readonly MemberRole[]>;

export type Action = keyof typeof PERMISSIONS;

export function can(role: MemberRole, action: Action): boolean {
  return (PERMISSIONS[action] as readonly MemberRole[]).includes(role);
}

/** The roles a role may hand out in an invitation or a role change. */
export function assignableRoles(role: MemberRole): readonly MemberRole[] {
  if (can(role, "members.manage")) return ["owner", "admin", "member", "billing"];
  if (can(role, "members.invite")) return ["admin", "member", "billing"];
  return [];
}
