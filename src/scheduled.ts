import type { Env } from "./env";
import { settings, type Settings } from "./settings";
import { logError, logInfo } from "./log-error";
import { reconcileAllFromEnv } from "./payments/reconcile";
import { pageStripeCallsLastMinute } from "./console/credits/stripe-allowance";
import { refreshHealth } from "./health/health-snapshot";
import { archiveFromEnv } from "./generations/archive-records";
import { compactFromEnv } from "./generations/compact-records";
import { pruneAudit } from "./members/audit-store";

/** The work of the Cron Trigger (wrangler.toml `[triggers] crons`), by name. Each runs on its own: one failing stops no other. */
const TASKS: Record<string, (env: Env, s: Settings) => Promise<unknown>> = {
  "payment reconciliation": async (env, s) => {
    // Once a minute, the Stripe calls of the minute: this run's (at most two per payment of its batch) and the credits pages'.
    const [report, pageCalls] = await Promise.all([reconcileAllFromEnv(env, s), pageStripeCallsLastMinute(env)]);
    if (report.lookedAt > 0 || pageCalls > 0) logInfo("payments reconciled", { ...report, pageStripeCallsLastMinute: pageCalls });
  },
  "endpoint health fold": (env) => refreshHealth(env),
  "records archive": (env, s) => archiveFromEnv(env, s),
  "records compaction": (env, s) => compactFromEnv(env, s),
  "audit log retention": (env, s) => pruneAudit(env.DB, s.AUDIT_LOG_KEEP_DAYS),
};

/** Work kept off the request path, once a minute (the records archive: docs/storage.md). */
export async function scheduled(_controller: ScheduledController, env: Env, _ctx: ExecutionContext): Promise<void> {
  const names = Object.keys(TASKS);
  const s = settings(env); // read once here, passed to every task
  const results = await Promise.allSettled(names.map((name) => TASKS[name]!(env, s)));
  results.forEach((r, i) => {
    if (r.status === "rejected") logError(`scheduled task failed: ${names[i]}`, r.reason);
  });
}
