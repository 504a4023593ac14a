import type { ApiKey } from "./db/schema";

/**
 * The Worker's environment. Bindings (D1, KV, Durable Objects, the settle queue) come from wrangler.toml
 * through `wrangler types` (worker-configuration.d.ts, `Cloudflare.Env`; `npm run types` regenerates it
 * and `npm run typecheck` fails when it is stale). Secrets and optional settings are not in wrangler.toml,
 * so they are declared here, all optional. Carrier API keys are secrets named in catalog.json, read
 * through `carrierSecret`.
 */
export interface Env extends Cloudflare.Env, Settings {}

/** Secrets and vars, all optional; README: Configuration. */
export interface Settings {
  /** Guards /admin. Unset in a deploy until `wrangler secret put ADMIN_TOKEN`; then /admin answers 401. */
  ADMIN_TOKEN?: string;
  /** Local runs only: every carrier's base URL becomes `${CARRIER_BASE_URL_OVERRIDE}/<carrier slug>/v1`. */
  CARRIER_BASE_URL_OVERRIDE?: string;
  /** Per-attempt time to the carrier's whole answer (non-stream) or its headers (stream), and the longest silence mid-stream, ms (default 60000). */
  CARRIER_TIMEOUT_MS?: string;
  /** An integer: every request's load-balancing draw is the same (src/routing/routing-random.ts); unset = random. */
  ROUTING_SEED?: string;
  /** Ledger timings (README: Configuration), in ms; unset = the documented defaults. */
  LEDGER_LEASE_TTL_MS?: string;
  LEDGER_HOLD_TTL_MS?: string;
  SETTLE_RETRY_BUDGET_MS?: string;
  SETTLE_WINDOW_MS?: string;
  SETTLE_ATTEMPT_TIMEOUT_MS?: string;
  /** Most bytes of an unread request body (e.g. an oversized one) read and discarded before answering (default 64 MiB); README: Configuration. */
  BODY_DRAIN_MAX_BYTES?: string;
  /** Longest time spent draining an unread request body before answering, ms (default 10000). */
  BODY_DRAIN_MAX_MS?: string;
  /** A payment never charged is given up (failed) by reconciliation after this long, ms (default 900000). */
  PAYMENT_ABANDON_AFTER_MS?: string;
  /** Most unfinished payments one reconciliation run (cron, or a credits page load) looks at (default 100). */
  PAYMENTS_RECONCILE_BATCH?: string;
  /** Largest single stream event relayed, in bytes (default 8 MiB); a larger one ends the stream with a 502 error chunk. */
  RELAY_MAX_EVENT_BYTES?: string;
  /** Most bytes one carrier stream may send (default 256 MiB). */
  RELAY_MAX_STREAM_BYTES?: string;
  /** Longest a stream may run from the request's arrival, in ms (default 25 minutes). */
  RELAY_MAX_STREAM_MS?: string;
  /** How long, in ms, a carrier's body may take to end after its [DONE] (default 1000): then its connection is reused; past it, cut off. */
  RELAY_AFTER_DONE_MS?: string;
  /** Free-model rate limits per account (README: Rate limits): requests a minute (default 20), a UTC day below and from the bought threshold (50, 1000), the threshold in whole USD of credits granted (10). */
  FREE_REQUESTS_PER_MINUTE?: string;
  FREE_REQUESTS_PER_DAY?: string;
  FREE_REQUESTS_PER_DAY_BOUGHT?: string;
  FREE_BOUGHT_THRESHOLD_USD?: string;
  /** "on" turns on the console's local test-card payment flow (`npm start` sets it). Unset/anything else: adding credits is off. */
  PAYMENTS_TEST_MODE?: string;
}

/** The authenticated caller, set by the auth middleware. */
export type Caller = { key: ApiKey; accountId: string };

export type AppEnv = { Bindings: Env; Variables: { caller: Caller } };
