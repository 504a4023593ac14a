import type { Env } from "./env";
import { app } from "./app";
import { consumeSettles } from "./ledger/settle-queue";
import { scheduled } from "./scheduled";

export { LedgerObject } from "./ledger/ledger-object";
export { RateLimiterObject } from "./rate-limits/rate-limiter-object";

/** The Worker's handlers: HTTP (the API, /admin, the console), the Cron Trigger and the settle queue. */
export default {
  fetch: app.fetch,
  scheduled,
  /** Settle batches an isolate could not store in a ledger in time (src/ledger/settle-queue.ts). */
  queue: (batch: MessageBatch<unknown>, env: Env) => consumeSettles(batch, env),
} satisfies ExportedHandler<Env, unknown>;
