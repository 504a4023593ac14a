import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { members } from "./members";

// The console's sign-ins: passwords, sessions and one-time links.

/** A console sign-in: a member's password, hashed with PBKDF2-SHA256 (WebCrypto). One row per member that has a password. */
export const credentials = sqliteTable("credentials", {
  memberId: text("member_id")
    .primaryKey()
    .references(() => members.id),
  algorithm: text("algorithm").notNull(), // "pbkdf2-sha256"
  iterations: integer("iterations").notNull(), // 100000
  salt: text("salt").notNull(), // base64 of 16 random bytes, one salt per password
  passwordHash: text("password_hash").notNull(), // base64 of the 32-byte derived key
  updatedAt: integer("updated_at").notNull(), // Unix ms
});

/** A member's console session (in the member's account). The cookie holds a random token; only its SHA-256 hash is stored. */
export const sessions = sqliteTable(
  "sessions",
  {
    tokenHash: text("token_hash").primaryKey(), // hex SHA-256 of the session token
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    memberId: text("member_id").references(() => members.id), // who signed in (null only on rows from before members: none survive the migration)
    createdAt: integer("created_at").notNull(), // Unix ms
    expiresAt: integer("expires_at").notNull(), // Unix ms; an expired row is ignored and pruned on the account's next sign-in
  },
  (t) => [index("sessions_account").on(t.accountId), index("sessions_member").on(t.memberId)],
);

/**
 * A one-time console link, shown once: `sign-in` signs its account in (an account the operator made has no
 * password); `invite` lets one person sign up while sign-up is invite-only. Only the token's SHA-256 hash is
 * stored; redeeming deletes the row, so a link works once, and never after `expires_at`.
 */
export const oneTimeLinks = sqliteTable(
  "one_time_links",
  {
    tokenHash: text("token_hash").primaryKey(), // hex SHA-256 of the link's token
    kind: text("kind", { enum: ["sign-in", "invite"] }).notNull(),
    accountId: text("account_id").references(() => accounts.id), // the account a sign-in link signs in; null for an invitation
    createdAt: integer("created_at").notNull(), // Unix ms
    expiresAt: integer("expires_at").notNull(), // Unix ms
  },
  (t) => [index("one_time_links_account").on(t.accountId)],
);
