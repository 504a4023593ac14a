import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// The people of an account (docs/teams.md, "Members and roles"): members, invitations, the audit log.

/** The roles a member may hold; what each may do is src/members/permissions.ts. */
export const MEMBER_ROLES = ["owner", "admin", "member", "billing"] as const;

/** A person in an account: signs in with this email (unique across the deployment) and lands in this account. */
export const members = sqliteTable(
  "members",
  {
    id: text("id").primaryKey(), // "mem_<hex>"
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull().unique(),
    role: text("role", { enum: MEMBER_ROLES }).notNull(),
    createdAt: integer("created_at").notNull(), // Unix ms
  },
  (t) => [index("members_account").on(t.accountId)],
);

/**
 * An invitation to join an account with a role, shown once as a link: only the token's SHA-256 hash is
 * stored; accepting deletes the row in the statement that reads it (single use), never after `expires_at`.
 */
export const memberInvites = sqliteTable(
  "member_invites",
  {
    tokenHash: text("token_hash").primaryKey(), // hex SHA-256 of the link's token
    id: text("id").notNull().unique(), // "inv_<hex>": names the invitation on the members page (revoke) without its token
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    role: text("role", { enum: MEMBER_ROLES }).notNull(),
    invitedBy: text("invited_by").notNull(), // the inviting member's id
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("member_invites_account").on(t.accountId)],
);

/** One administrative action on an account: who (member and email), how (a session or a key), what, on what, when. */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    at: integer("at").notNull(), // Unix ms
    actorMemberId: text("actor_member_id"), // null: the operator's key (made by `npm run admin`, no member)
    actorEmail: text("actor_email"),
    via: text("via").notNull(), // "session" or "key:<label>"
    action: text("action").notNull(), // e.g. "key.create", "member.role"
    target: text("target"), // what it acted on: a key hash's label, a member's email, a guardrail id, a preset slug
    details: text("details"), // small JSON
  },
  (t) => [index("audit_events_account_at").on(t.accountId, t.at), index("audit_events_at").on(t.at)],
);
