import type { Context } from "hono";
import type { AppEnv } from "../keys/caller";
import type { KeyScope } from "../keys/key-store";
import { can } from "../members/permissions";
import type { Actor } from "../members/audit-store";

/** Whose keys a management key sees and changes: every key of the account, or (a member's key) only its member's. */
export function keyScope(c: Context<AppEnv>): KeyScope {
  const actor = c.get("caller").actor;
  return !actor || can(actor.role, "keys.all") || actor.memberId === null ? undefined : { memberId: actor.memberId };
}

/** The management key as the audit log names it: its member, and the key by its masked label. */
export function keyActor(c: Context<AppEnv>): Actor {
  const { key, accountId, actor } = c.get("caller");
  return { accountId, memberId: actor?.memberId ?? null, email: actor?.email ?? null, via: `key:${key.label}` };
}
