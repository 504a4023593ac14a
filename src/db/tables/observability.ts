import { sqliteTable, text, integer, real, index } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Observability (docs/observability.md): where an account's generation records go as OpenTelemetry spans, and
// what became of each delivery.

/** One export destination of an account (OpenRouter's `/observability/destinations`, the kinds supported). */
export const observabilityDestinations = sqliteTable(
  "observability_destinations",
  {
    id: text("id").primaryKey(), // a UUID
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    type: text("type", { enum: ["otel-collector", "webhook"] }).notNull(),
    name: text("name").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    // otel-collector: the collector's base URL (`/v1/traces` is added) or the traces URL itself; webhook: its URL.
    endpoint: text("endpoint").notNull(),
    encoding: text("encoding", { enum: ["protobuf", "json"] }).notNull(), // otel-collector's; a webhook's body is JSON
    method: text("method", { enum: ["POST", "PUT"] }).notNull(), // a webhook's; POST for a collector
    // Secrets sealed (src/observability/destination-secrets.ts: AES-256-GCM under REASONING_SEAL_KEY, bound to
    // the destination's id), never in clear (docs/observability.md, "Secrets"). A webhook's signing secret
    // (`whsec_…`, shown once at creation): it must sign, so it is sealed, not hashed; null for a collector.
    signingSecretSealed: text("signing_secret"),
    // The JSON object of header → value sent with each export (a collector's auth), sealed; `{}` (nothing to
    // seal) when there are none.
    headersSealed: text("headers").notNull(),
    // What is shown instead: the secret masked (`whse...abcd`), and each header's value masked (JSON name → mask).
    secretHint: text("secret_hint"),
    headerHints: text("header_hints").notNull().default("{}"),
    samplingRate: real("sampling_rate").notNull(), // 0..1
    apiKeyHashes: text("api_key_hashes"), // JSON array of key hashes whose records go here; null = every key
    privacyMode: integer("privacy_mode", { mode: "boolean" }).notNull(),
    broadcastCost: integer("broadcast_cost", { mode: "boolean" }).notNull(),
    broadcastIdentity: integer("broadcast_identity", { mode: "boolean" }).notNull(),
    broadcastRequestContext: integer("broadcast_request_context", { mode: "boolean" }).notNull(),
    createdAt: integer("created_at").notNull(), // Unix ms
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("observability_destinations_account").on(t.accountId, t.createdAt)],
);

/** One delivery attempt of spans to a destination: the account's delivery log, its newest rows kept. */
export const observabilityDeliveries = sqliteTable(
  "observability_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    destinationId: text("destination_id").notNull(),
    at: integer("at").notNull(), // Unix ms
    spans: integer("spans").notNull(),
    attempt: integer("attempt").notNull(), // the queue's attempt, 1 first
    status: integer("status").notNull(), // the destination's HTTP status; 0 = unreachable or timed out
    outcome: text("outcome", { enum: ["delivered", "retrying", "failed", "dead"] }).notNull(),
  },
  (t) => [index("observability_deliveries_account").on(t.accountId, t.id)],
);
