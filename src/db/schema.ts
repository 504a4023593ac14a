import { sqliteTable, text, integer, real, index, primaryKey, uniqueIndex } from "drizzle-orm/sqlite-core";
import { BUCKET_COLUMNS, METRICS } from "./health-buckets";
import type { InboundApiName } from "../protocols/inbound";

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
  },
  (t) => [index("api_keys_account").on(t.accountId)],
);

/** One record per completion request, successful or failed, copied here from the ledger's outbox. */
export const generations = sqliteTable(
  "generations",
  {
    id: text("id").primaryKey(), // "gen-<random>"
    accountId: text("account_id").notNull(),
    keyHash: text("key_hash").notNull(),
    model: text("model").notNull(), // as requested
    providerName: text("provider_name"), // carrier that served it; null when none did
    app: text("app"),
    streamed: integer("streamed", { mode: "boolean" }).notNull(),
    createdAt: integer("created_at").notNull(), // Unix ms
    latencyMs: integer("latency_ms"), // time to first token
    generationTimeMs: integer("generation_time_ms"), // whole request
    tokensPrompt: integer("tokens_prompt").notNull(),
    tokensCompletion: integer("tokens_completion").notNull(),
    tokensReasoning: integer("tokens_reasoning").notNull(),
    // Of tokens_prompt: read from the carrier's cache, and written to it (OpenRouter's meaning: the prompt includes both).
    tokensCached: integer("tokens_cached").notNull().default(0),
    tokensCacheWrite: integer("tokens_cache_write").notNull().default(0),
    // What caching changed the cost by, in nano-USD: the prompt at the input price minus what it was billed (negative when writes cost more).
    cacheDiscountNano: integer("cache_discount_nano").notNull().default(0),
    costNano: integer("cost_nano").notNull(), // what was debited; 0 when nothing was
    finishReason: text("finish_reason"),
    status: integer("status").notNull(), // HTTP status the caller got (or the in-stream error code)
    errorMessage: text("error_message"),
    upstreamId: text("upstream_id"), // the carrier's own completion id
    cancelled: integer("cancelled", { mode: "boolean" }).notNull().default(false), // the caller went away mid-stream
    httpReferer: text("http_referer"),
    userAgent: text("user_agent"),
    // Where the token counts come from: "carrier" (its usage), "estimate" (ours, docs/money.md), null when nothing was served.
    usageSource: text("usage_source", { enum: ["carrier", "estimate"] }),
    // Zero-completion insurance: served but not charged (no completion and no finish reason, or ended in an error).
    insured: integer("insured", { mode: "boolean" }).notNull().default(false),
    externalUser: text("external_user"), // the caller's `user` as sent (carriers got only its hash); null when none
    // JSON array of CarrierAttempt (src/carriers/carrier-attempt.ts): every carrier tried, in order, the one that served last.
    providerResponses: text("provider_responses"),
    // The routing strategy (RoutingStrategy): "direct", "fallback" (a `models` list) or "auto" (router/auto); null before routing.
    strategy: text("strategy", { enum: ["direct", "fallback", "auto"] }),
    sessionId: text("session_id"), // the request's session_id (or x-session-id header); null when none
    // The API the caller spoke: one per inbound API registered in src/protocols/inbound/index.ts ("chat", "messages", …);
    // "chat" for rows recorded before the column was.
    inboundApi: text("inbound_api").$type<InboundApiName>().notNull().default("chat"),
    // The completion cap (max_tokens) the router set on the carrier that served, because the key's limit or the
    // balance could not pay the endpoint's maximum (the caller set none); null when the router set none.
    adjustedMaxTokens: integer("adjusted_max_tokens"),
    // Raised by each flush that replaces the row (a late settle): the archive deletes only the revision it copied.
    rev: integer("rev").notNull().default(0),
  },
  // created_at alone: the archive finds the oldest records past retention, over all accounts.
  (t) => [index("generations_account_created").on(t.accountId, t.createdAt), index("generations_created").on(t.createdAt)],
);

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

/**
 * Record batches the consumer failed on every retry (the records queue's dead letters), one row per batch:
 * seen by the admin's storage and audit. Their records are still in the ledger's outbox, which sends them
 * again; the row goes when the batch is stored.
 */
export const deadRecordBatches = sqliteTable("dead_record_batches", {
  batch: text("batch").primaryKey(),
  accountId: text("account_id").notNull(),
  records: integer("records").notNull(),
  times: integer("times").notNull(), // dead-lettered this many times
  lastAt: integer("last_at").notNull(), // Unix ms, the latest
});

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

/** Archived records whose id carries no time (made before time-sortable ids): where each one went. */
export const archivedLegacyIds = sqliteTable("archived_legacy_ids", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull(),
  day: text("day").notNull(),
  part: integer("part").notNull(),
});

/**
 * No longer written (issue 36): endpoint health is folded from `endpointMinutes` and
 * `endpointMinuteHistograms` below. It was one row per carrier attempt, copied from each flushed record;
 * kept (emptied by migration 0014) while the records path's archive still names it.
 */
export const endpointAttempts = sqliteTable(
  "endpoint_attempts",
  {
    generationId: text("generation_id").notNull(),
    idx: integer("idx").notNull(), // position among the request's attempts, from 0
    model: text("model").notNull(), // catalog model id the attempt was for
    provider: text("provider").notNull(), // carrier slug
    at: integer("at").notNull(), // attempt start, Unix ms
    status: integer("status").notNull(), // carrier HTTP status; 502 unreachable or unusable, 504 timeout
    latencyMs: integer("latency_ms").notNull(), // to the first token when served, else to the failure
    tokensPerSecond: real("tokens_per_second"), // completion tokens / seconds after the first token; null when none
  },
  (t) => [
    primaryKey({ columns: [t.generationId, t.idx] }),
    index("endpoint_attempts_model_provider_at").on(t.model, t.provider, t.at),
    index("endpoint_attempts_at").on(t.at),
  ],
);

/**
 * Endpoint health per minute: the carrier attempts of flushed records, counted into their endpoint's
 * minute (src/db/endpoint-minutes.ts) — rows updated in place, so the table is bounded by endpoints ×
 * minutes kept (a day and an hour), never by requests. `counted` and `up` follow isCarrierFault
 * (src/db/carrier-attempt.ts): 429 counts neither way, a carrier's failure counts down.
 */
export const endpointMinutes = sqliteTable(
  "endpoint_minutes",
  {
    model: text("model").notNull(), // catalog model id the attempts were for
    provider: text("provider").notNull(), // carrier slug
    minute: integer("minute").notNull(), // start of the minute the attempts started in, Unix ms
    counted: integer("counted").notNull().default(0), // attempts but 429s
    up: integer("up").notNull().default(0), // of those, the ones that were not the carrier's failure
  },
  (t) => [primaryKey({ columns: [t.model, t.provider, t.minute] }), index("endpoint_minutes_minute").on(t.minute)],
);

const bucketColumn = (name: string) => integer(name).notNull().default(0);
/**
 * Served attempts' latency (ms to the first token) and throughput (tokens/s) per endpoint and minute, as
 * counts per fixed bucket (src/db/health-buckets.ts: b0 … b92): one row per endpoint, minute and metric
 * however many samples, kept for the percentiles' 30 minutes and an hour.
 */
export const endpointMinuteHistograms = sqliteTable(
  "endpoint_minute_histograms",
  {
    model: text("model").notNull(),
    provider: text("provider").notNull(),
    minute: integer("minute").notNull(), // start of the minute, Unix ms
    metric: text("metric", { enum: METRICS }).notNull(),
    ...(Object.fromEntries(BUCKET_COLUMNS.map((c) => [c, bucketColumn(c)])) as Record<string, ReturnType<typeof bucketColumn>>),
  },
  (t) => [primaryKey({ columns: [t.model, t.provider, t.minute, t.metric] }), index("endpoint_minute_histograms_minute").on(t.minute)],
);

/** A console sign-in: the account's password, hashed with PBKDF2-SHA256 (WebCrypto). One row per account that signed up. */
export const credentials = sqliteTable("credentials", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id),
  algorithm: text("algorithm").notNull(), // "pbkdf2-sha256"
  iterations: integer("iterations").notNull(), // 100000
  salt: text("salt").notNull(), // base64 of 16 random bytes, one salt per account
  passwordHash: text("password_hash").notNull(), // base64 of the 32-byte derived key
  updatedAt: integer("updated_at").notNull(), // Unix ms
});

/** A console session. The cookie holds a random token; only its SHA-256 hash is stored. */
export const sessions = sqliteTable(
  "sessions",
  {
    tokenHash: text("token_hash").primaryKey(), // hex SHA-256 of the session token
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    createdAt: integer("created_at").notNull(), // Unix ms
    expiresAt: integer("expires_at").notNull(), // Unix ms; an expired row is ignored and pruned on the account's next sign-in
  },
  (t) => [index("sessions_account").on(t.accountId)],
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

/**
 * One "add credits" purchase: a Stripe Checkout Session for the credits plus the platform fee. The ledger
 * grant (`payment:<id>`) is the money; this row is the audit trail and the link to Stripe's objects.
 */
export const payments = sqliteTable(
  "payments",
  {
    id: text("id").primaryKey(), // "pay_<random>": the form's one-time token, also the Checkout Session's idempotency key
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    provider: text("provider").notNull(), // "stripe" (older rows: "test-card", the retired local flow)
    amountNano: integer("amount_nano").notNull(), // the credits bought, granted on payment
    feeNano: integer("fee_nano").notNull().default(0), // the platform fee charged beside them, never granted
    // pending (checkout open) → charged (Stripe took the money) → succeeded (the ledger granted it); or failed (expired, abandoned) / declined.
    status: text("status", { enum: ["pending", "charged", "succeeded", "declined", "failed"] }).notNull(),
    reference: text("reference"), // Stripe's PaymentIntent id once paid ("pi_…"); never card data
    checkoutSession: text("checkout_session"), // Stripe's Checkout Session id ("cs_…")
    refundedNano: integer("refunded_nano").notNull().default(0), // credits taken back for refunds (docs/payments.md)
    disputedNano: integer("disputed_nano").notNull().default(0), // credits withheld for open or lost disputes
    // When Stripe's state of the charge behind refunded_nano/disputed_nano was read (Unix ms; 0 = never): an older reading never overwrites them.
    reversalReadAt: integer("reversal_read_at").notNull().default(0),
    // When reconciliation last asked Stripe about this payment (Unix ms; null = never): the cron asks the least recently asked first.
    checkedAt: integer("checked_at"),
    createdAt: integer("created_at").notNull(), // Unix ms
  },
  (t) => [
    index("payments_account_created").on(t.accountId, t.createdAt),
    uniqueIndex("payments_checkout_session").on(t.checkoutSession),
    index("payments_reference").on(t.reference),
  ],
);

/** Every signed Stripe webhook event acted on or ignored, once per event id: the audit of what Stripe told us. */
export const stripeEvents = sqliteTable(
  "stripe_events",
  {
    id: text("id").primaryKey(), // "evt_…"
    type: text("type").notNull(),
    paymentId: text("payment_id"), // the payment it concerned, when one was found
    outcome: text("outcome").notNull(), // what it did: "granted", "refund recorded", "ignored: …"
    receivedAt: integer("received_at").notNull(), // Unix ms of the first delivery
  },
  (t) => [index("stripe_events_payment").on(t.paymentId)],
);

export type Account = typeof accounts.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type Generation = typeof generations.$inferSelect;
export type NewGeneration = typeof generations.$inferInsert;
export type ArchivePart = typeof archiveParts.$inferSelect;
export type Credential = typeof credentials.$inferSelect;
export type Session = typeof sessions.$inferSelect;
export type Payment = typeof payments.$inferSelect;
