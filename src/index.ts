import { app } from "./app";
import type { Env } from "./env";
import { consumeSettles } from "./ledger/settle-queue";

export { LedgerObject } from "./ledger/ledger-object";
export { RateLimiterObject } from "./console/auth/rate-limiter-object";

export default {
  fetch: app.fetch,
  /** The settle queue: batches an isolate could not store in a ledger in time (src/ledger/settle-queue.ts). */
  queue: (batch: MessageBatch<unknown>, env: Env) => consumeSettles(batch, env),
} satisfies ExportedHandler<Env, unknown>;
