import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Budget alerts' webhooks (docs/teams.md, "Budget alerts"). The thresholds and the alerts fired live in the
// account's ledger Durable Object, where the usage they watch is; D1 keeps where alerts go and how each went.

/** A webhook endpoint of an account: alerts are posted to its URL, signed with its secret. */
export const alertEndpoints = sqliteTable(
  "alert_endpoints",
  {
    id: text("id").primaryKey(), // `we_` + 24 hex digits
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    url: text("url").notNull(),
    // The signing secret, sealed (AES-256-GCM, src/webhooks/secret-box.ts): HMAC needs it back, so no hash will do.
    secretSealed: text("secret_sealed").notNull(),
    secretHint: text("secret_hint").notNull(), // its last 4 characters, to tell secrets apart
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("alert_endpoints_account").on(t.accountId)],
);

/** One delivery attempt of an alert to an endpoint; the newest ALERT_DELIVERY_LOG_ROWS of an account are kept. */
export const alertDeliveries = sqliteTable(
  "alert_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    url: text("url").notNull(), // the endpoint's URL then (the endpoint may be removed since)
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    attempt: integer("attempt").notNull(), // 1, 2, … (the queue's delivery attempt)
    outcome: text("outcome", { enum: ["delivered", "failed", "gave up"] }).notNull(),
    status: integer("status"), // the endpoint's HTTP status; null when it did not answer
    error: text("error"), // why it failed, in words; null when delivered
    at: integer("at").notNull(), // Unix ms
  },
  (t) => [index("alert_deliveries_account").on(t.accountId, t.id)],
);
