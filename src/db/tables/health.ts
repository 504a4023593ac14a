import { sqliteTable, text, integer, real, index, primaryKey } from "drizzle-orm/sqlite-core";
import { BUCKET_COLUMNS, METRICS } from "../health-buckets";

// Endpoint health: the attempts of earlier releases, and the per-minute rollups the health fold reads.

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
