import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";

// Accounts and their API keys.

/** An account: owns keys, a balance (held by its ledger Durable Object) and generations. */
export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(), // "acct_<hex>"
  email: text("email").notNull().unique(),
  createdAt: integer("created_at").notNull(), // Unix ms
});

/** An API key. Only its SHA-256 hash is stored; the plaintext is shown once at creation. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    hash: text("hash").primaryKey(), // hex SHA-256 of the full key
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    label: text("label").notNull(), // masked form: "sk-sy-v1-abc...xyz"
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    limitNano: integer("limit_nano"), // credit limit in nano-USD; null = no limit
    // The limit applies to the usage of the current UTC day, week (from Monday) or month; null = to all usage ever.
    limitReset: text("limit_reset", { enum: ["daily", "weekly", "monthly"] }),
    // Accepted and shown for OpenRouter compatibility; Switchyard has no bring-your-own-key usage, so it changes nothing.
    includeByokInLimit: integer("include_byok_in_limit", { mode: "boolean" }).notNull().default(false),
    expiresAt: integer("expires_at"), // Unix ms; from then on the key gets 401. Null = never
    // A management key manages keys through /keys and cannot run completions; other keys cannot manage keys.
    isManagement: integer("is_management", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at"), // Unix ms of the last change through /keys, the console or admin; null = never changed
    // The console form's one-time token that created the key (unique): a resubmitted form creates no second key. Null for keys made elsewhere.
    creationToken: text("creation_token").unique(),
    // The member who created the key (its management key acts with this member's current role); null = made by the operator (`npm run admin`).
    memberId: text("member_id"),
    // The key's requests use the answer cache without asking, their answers kept this many seconds (docs/caching.md);
    // a request's `X-OpenRouter-Cache: false` still opts out. Null = only requests that ask use it.
    answerCacheTtlS: integer("answer_cache_ttl_s"),
  },
  (t) => [index("api_keys_account").on(t.accountId), index("api_keys_member").on(t.memberId)],
);
