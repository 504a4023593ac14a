import type { Env } from "./env";
import { app } from "./app";
import { consumeSettles } from "./ledger/settle-queue";
import { consumeDeadRecordBatches, consumeRecordBatches, storeDeps } from "./generations/records-queue";
import { enqueueTraces } from "./observability/traces-queue";
import { consumeDeadTraces, consumeTraces, type TraceConsumerDeps } from "./observability/traces-consumer";
import { settings } from "./settings";
import { presentGeneration } from "./api/present-generation";
import { scheduled } from "./scheduled";
import { alertDeps, consumeAlerts, consumeDeadAlerts } from "./alerts/alerts-queue";
import { destinationBox } from "./observability/destination-secrets";

export { LedgerObject } from "./ledger/ledger-object";
export { RateLimiterObject } from "./rate-limits/rate-limiter-object";

/** The traces consumers' D1, settings and the box that opens destinations' secrets. */
function traceConsumerDeps(env: Env): TraceConsumerDeps {
  const s = settings(env);
  return {
    d1: env.DB,
    timeoutMs: s.OBSERVABILITY_EXPORT_TIMEOUT_MS,
    logRows: s.OBSERVABILITY_DELIVERY_LOG_ROWS,
    now: Date.now,
    present: presentGeneration,
    box: destinationBox(s),
  };
}

/**
 * The queue consumers, by the ending of the queue's name (wrangler.toml; a deployment may prefix the names): the ledgers' record batches
 * (src/generations/records-queue.ts), whose stored records go on as spans to observability destinations
 * (src/observability/traces-consumer.ts), budget alerts on their way to webhooks (src/alerts/alerts-queue.ts),
 * and — any other queue — settle batches an isolate could not store in a ledger in time (src/ledger/settle-queue.ts).
 */
const CONSUMERS: ReadonlyArray<[suffix: string, consume: (batch: MessageBatch<unknown>, env: Env) => Promise<void>]> = [
  ["-records-dead", (batch, env) => consumeDeadRecordBatches(batch, env)],
  [
    "-records",
    (batch, env) =>
      consumeRecordBatches(batch, storeDeps(env), (accountId, records) => enqueueTraces({ d1: env.DB, queue: env.TRACES_QUEUE }, accountId, records)),
  ],
  ["-traces-dead", (batch, env) => consumeDeadTraces(batch, traceConsumerDeps(env))],
  ["-traces", (batch, env) => consumeTraces(batch, traceConsumerDeps(env))],
  ["-alerts-dead", (batch, env) => consumeDeadAlerts(batch, alertDeps(env))],
  ["-alerts", (batch, env) => consumeAlerts(batch, alertDeps(env))],
];

/** The Worker's handlers: HTTP (the API, /admin, the console), the Cron Trigger and the queues. */
export default {
  fetch: app.fetch,
  scheduled,
  queue: (batch: MessageBatch<unknown>, env: Env) => (CONSUMERS.find(([suffix]) => batch.queue.endsWith(suffix))?.[1] ?? consumeSettles)(batch, env),
} satisfies ExportedHandler<Env, unknown>;
