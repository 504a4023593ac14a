import type { Env } from "./env";
import { app } from "./app";
import { consumeSettles } from "./ledger/settle-queue";
import { consumeDeadRecordBatches, consumeRecordBatches, storeDeps } from "./generations/records-queue";
import { enqueueTraces } from "./observability/traces-queue";
import { consumeDeadTraces, consumeTraces, type TraceConsumerDeps } from "./observability/traces-consumer";
import { settings } from "./settings";
import { presentGeneration } from "./api/present-generation";
import { scheduled } from "./scheduled";

export { LedgerObject } from "./ledger/ledger-object";
export { RateLimiterObject } from "./rate-limits/rate-limiter-object";

/** The traces consumers' D1 and settings. */
function traceConsumerDeps(env: Env): TraceConsumerDeps {
  const s = settings(env);
  return { d1: env.DB, timeoutMs: s.OBSERVABILITY_EXPORT_TIMEOUT_MS, logRows: s.OBSERVABILITY_DELIVERY_LOG_ROWS, now: Date.now, present: presentGeneration };
}

/** The Worker's handlers: HTTP (the API, /admin, the console), the Cron Trigger and the queues. */
export default {
  fetch: app.fetch,
  scheduled,
  /**
   * By queue (wrangler.toml; a deployment may prefix the names): the ledgers' record batches and their dead
   * letters (src/generations/records-queue.ts), the spans of stored records on their way to observability
   * destinations and theirs (src/observability/traces-consumer.ts), and settle batches an isolate could not
   * store in a ledger in time (src/ledger/settle-queue.ts).
   */
  queue: (batch: MessageBatch<unknown>, env: Env) =>
    batch.queue.endsWith("-records-dead")
      ? consumeDeadRecordBatches(batch, env)
      : batch.queue.endsWith("-records")
        ? consumeRecordBatches(batch, storeDeps(env), (accountId, records) => enqueueTraces({ d1: env.DB, queue: env.TRACES_QUEUE }, accountId, records))
        : batch.queue.endsWith("-traces-dead")
          ? consumeDeadTraces(batch, traceConsumerDeps(env))
          : batch.queue.endsWith("-traces")
            ? consumeTraces(batch, traceConsumerDeps(env))
            : consumeSettles(batch, env),
} satisfies ExportedHandler<Env, unknown>;
