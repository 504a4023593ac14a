import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from "drizzle-orm/sqlite-core";

// The records archive in R2: its parts' index, its rollups, and objects compaction merged away.

/**
 * The records archive's index (docs/storage.md, "R2 bucket ARCHIVE"): one row per archived object, a part
 * of one account's UTC day of generation records. `writing` = the object may be (being) written and the
 * records are still in D1; `archived` = the object was verified and its records left D1 in the same batch.
 */
export const archiveParts = sqliteTable(
  "archive_parts",
  {
    accountId: text("account_id").notNull(),
    day: text("day").notNull(), // UTC day of the records' created_at, "YYYY-MM-DD"
    part: integer("part").notNull(), // 0, 1, … within the day, in the order written
    key: text("key").notNull().unique(), // the R2 object: records/v1/<account>/<day>/<part>.ndjson.gz
    state: text("state", { enum: ["writing", "archived"] }).notNull(),
    records: integer("records").notNull(),
    bytes: integer("bytes").notNull(), // the object's size (gzip)
    sha256: text("sha256").notNull(), // hex SHA-256 of the object's bytes
    firstAt: integer("first_at").notNull(), // created_at of its oldest and newest record, Unix ms
    lastAt: integer("last_at").notNull(),
    costNano: integer("cost_nano").notNull(), // Σ cost_nano of its records
    writtenAt: integer("written_at").notNull(), // Unix ms the row was last (re)written as `writing`
    archivedAt: integer("archived_at"), // Unix ms of the batch that archived it; null while `writing`
    commitId: text("commit_id"), // random id of that batch: its later statements act only if this one set the state
    // The ledger's record batch the part holds (src/generations/store-batches.ts), null for a part the archive
    // moved out of D1. A batch is stored once per UTC day it spans: unique with the account and day.
    batch: text("batch"),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.day, t.part] }),
    index("archive_parts_account_last").on(t.accountId, t.lastAt),
    uniqueIndex("archive_parts_batch").on(t.accountId, t.day, t.batch),
    // Compaction looks for small parts: a range of this index visits only those, however many large ones there are.
    index("archive_parts_records").on(t.records),
  ],
);

/** R2 objects compaction merged away, deleted once `after` has passed (a reader that listed them just before still finds them). */
export const recordObjectDeletes = sqliteTable("record_object_deletes", {
  key: text("key").primaryKey(),
  after: integer("after").notNull(), // Unix ms
});

/**
 * The account's stored records summed per UTC hour, model, key, carrier and API (the records queue's
 * consumer adds each batch once, in the transaction that indexes its parts): the console's charts and
 * breakdowns and the audit's totals without reading R2. Rows are updated in place: bounded by accounts ×
 * hours × those dimensions, never by requests. Records the archive moved out of D1 are summed in
 * `archive_rollups` instead (per part), never in both.
 */
export const recordRollups = sqliteTable(
  "record_rollups",
  {
    accountId: text("account_id").notNull(),
    hour: integer("hour").notNull(), // Unix ms of the UTC hour's start
    model: text("model").notNull(),
    keyHash: text("key_hash").notNull(),
    providerName: text("provider_name").notNull(), // "" when no carrier served
    inboundApi: text("inbound_api").notNull(),
    requests: integer("requests").notNull(),
    tokensPrompt: integer("tokens_prompt").notNull(),
    tokensCompletion: integer("tokens_completion").notNull(),
    tokensCached: integer("tokens_cached").notNull(),
    tokensCacheWrite: integer("tokens_cache_write").notNull(),
    costNano: integer("cost_nano").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.hour, t.model, t.keyHash, t.providerName, t.inboundApi] })],
);

/** An archived part's records summed by model, key and carrier: the console's totals without reading R2. */
export const archiveRollups = sqliteTable(
  "archive_rollups",
  {
    accountId: text("account_id").notNull(),
    day: text("day").notNull(),
    part: integer("part").notNull(),
    model: text("model").notNull(),
    keyHash: text("key_hash").notNull(),
    providerName: text("provider_name"), // null: no carrier served
    requests: integer("requests").notNull(),
    tokensPrompt: integer("tokens_prompt").notNull(),
    tokensCompletion: integer("tokens_completion").notNull(),
    tokensCached: integer("tokens_cached").notNull(),
    costNano: integer("cost_nano").notNull(),
  },
  (t) => [index("archive_rollups_account_day").on(t.accountId, t.day)],
);
