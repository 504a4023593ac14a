import type { Env } from "./env";
import { app } from "./app";
import { consumeSettles } from "./ledger/settle-queue";
import { consumeDeadRecordBatches, consumeRecordBatches, storeDeps } from "./generations/records-queue";
import { scheduled } from "./scheduled";
import { alertDeps, consumeAlerts, consumeDeadAlerts } from "./alerts/alerts-queue";

export { LedgerObject } from "./ledger/ledger-object";
export { RateLimiterObject } from "./rate-limits/rate-limiter-object";

/** The Worker's handlers: HTTP (the API, /admin, the console), the Cron Trigger and the queues. */
export default {
  fetch: app.fetch,
  scheduled,
  /**
   * By queue (wrangler.toml; a deployment may prefix the names): the ledgers' record batches and their dead
   * letters (src/generations/records-queue.ts), and settle batches an isolate could not store in a ledger
   * in time (src/ledger/settle-queue.ts), and budget alerts on their way to webhooks (src/alerts/alerts-queue.ts).
   */
  queue: (batch: MessageBatch<unknown>, env: Env) =>
    batch.queue.endsWith("-alerts-dead")
      ? consumeDeadAlerts(batch, alertDeps(env))
      : batch.queue.endsWith("-alerts")
        ? consumeAlerts(batch, alertDeps(env))
        : batch.queue.endsWith("-records-dead")
          ? consumeDeadRecordBatches(batch, env)
          : batch.queue.endsWith("-records")
            ? consumeRecordBatches(batch, storeDeps(env))
            : consumeSettles(batch, env),
} satisfies ExportedHandler<Env, unknown>;
