import type { Env } from "./env";
import { logError } from "./log-error";
import { reconcileFromEnv } from "./payments/reconcile";
import { refreshHealth } from "./health/health-snapshot";
import { archiveFromEnv } from "./generations/archive-records";

/** The work of the Cron Trigger (wrangler.toml `[triggers] crons`), by name. Each runs on its own: one failing stops no other. */
const TASKS: Record<string, (env: Env) => Promise<unknown>> = {
  "payment reconciliation": (env) => reconcileFromEnv(env),
  "endpoint health fold": (env) => refreshHealth(env),
  "records archive": (env) => archiveFromEnv(env),
};

/** Work kept off the request path, once a minute (the records archive: docs/storage.md). */
export async function scheduled(_controller: ScheduledController, env: Env, _ctx: ExecutionContext): Promise<void> {
  const names = Object.keys(TASKS);
  const results = await Promise.allSettled(names.map((name) => TASKS[name]!(env)));
  results.forEach((r, i) => {
    if (r.status === "rejected") logError(`scheduled task failed: ${names[i]}`, r.reason);
  });
}
