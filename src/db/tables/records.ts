import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";

// The generation records a release before the records queue kept in D1, and the records queue's bookkeeping.

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
    // The API the caller spoke: one per inbound API registered in src/protocols/inbound/index.ts ("chat", "messages", …;
    // typed as such where a record is made, src/generations/record.ts); "chat" for rows recorded before the column was.
    inboundApi: text("inbound_api").notNull().default("chat"),
    // The completion cap (max_tokens) the router set on the carrier that served, because the key's limit or the
    // balance could not pay the endpoint's maximum (the caller set none); null when the router set none.
    adjustedMaxTokens: integer("adjusted_max_tokens"),
    // The preset the request named (`model: "@preset/<slug>[@<n>]"`, docs/teams.md#presets): its id, slug and the
    // version applied; null when it named none.
    presetId: text("preset_id"),
    preset: text("preset"),
    presetVersion: integer("preset_version"),
    // Served with the account's own carrier key (docs/byok.md): cost_nano is then the platform's fee only, and
    // byok_upstream_nano what the carrier charged the account at the catalog's prices (null when not BYOK).
    byok: integer("byok", { mode: "boolean" }).notNull().default(false),
    byokUpstreamNano: integer("byok_upstream_nano"),
    // The generation whose answer this request was served from, out of the answer cache (docs/caching.md), at no
    // cost; null when a carrier served it (or none did). The contract's `response_cache_source_id`.
    responseCacheSourceId: text("response_cache_source_id"),
    // Raised by each flush that replaces the row (a late settle): the archive deletes only the revision it copied.
    rev: integer("rev").notNull().default(0),
  },
  // created_at alone: the archive finds the oldest records past retention, over all accounts.
  (t) => [index("generations_account_created").on(t.accountId, t.createdAt), index("generations_created").on(t.createdAt)],
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

/** Archived records whose id carries no time (made before time-sortable ids): where each one went. */
export const archivedLegacyIds = sqliteTable("archived_legacy_ids", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull(),
  day: text("day").notNull(),
  part: integer("part").notNull(),
});
