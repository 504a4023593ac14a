import type { Env } from "./env";
import { app } from "./app";
import { scheduled } from "./scheduled";

export { LedgerObject } from "./ledger/ledger-object";
export { RateLimiterObject } from "./console/auth/rate-limiter-object";

/** The Worker's handlers: HTTP (the API, /admin, the console) and the Cron Trigger. Add others (e.g. `queue`) beside them. */
export default {
  fetch: app.fetch,
  scheduled,
} satisfies ExportedHandler<Env>;
