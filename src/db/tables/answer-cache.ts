import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";

/**
 * The index of the cached answers each account keeps in KV (docs/caching.md): one row per entry, its
 * compressed size and when it expires, so an account's entries can be counted and its oldest evicted
 * (KV alone cannot list an account's entries consistently, nor sum their sizes).
 */
export const answerCacheEntries = sqliteTable(
  "answer_cache_entries",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(), // the entry's cache key (SHA-256 hex), under the account's KV prefix
    bytes: integer("bytes").notNull(), // the stored value's size (compressed)
    createdAt: integer("created_at").notNull(), // Unix ms
    expiresAt: integer("expires_at").notNull(), // Unix ms
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("answer_cache_account_created").on(t.accountId, t.createdAt)],
);
