import type { LedgerObject } from "./ledger/ledger-object";
import type { RateLimiterObject } from "./console/auth/rate-limiter-object";
import type { ApiKey } from "./db/schema";

/** Bindings, typed once. Carrier API keys are secrets named in catalog.json, read through `carrierSecret`. */
export interface Env {
  DB: D1Database;
  CATALOG: KVNamespace;
  LEDGER: DurableObjectNamespace<LedgerObject>;
  /** Console sign-in/sign-up attempt counters: one `RateLimiterObject` per email and per client. Never on the API path. */
  RATE_LIMITER: DurableObjectNamespace<RateLimiterObject>;
  /** Guards /admin. Unset in a deploy until `wrangler secret put ADMIN_TOKEN`; then /admin answers 401. */
  ADMIN_TOKEN?: string;
  /** Local runs only: every carrier's base URL becomes `${CARRIER_BASE_URL_OVERRIDE}/<carrier slug>/v1`. */
  CARRIER_BASE_URL_OVERRIDE?: string;
  /** Per-attempt time to the carrier's whole answer (non-stream) or headers (stream), and the longest silence mid-stream, in ms (default 60000). */
  CARRIER_TIMEOUT_MS?: string;
  /** Largest single stream event relayed, in bytes (default 8 MiB); a larger one ends the stream with a 502 error chunk. */
  RELAY_MAX_EVENT_BYTES?: string;
  /** Most bytes one carrier stream may send (default 256 MiB). */
  RELAY_MAX_STREAM_BYTES?: string;
  /** Longest a stream may run from the request's arrival, in ms (default 25 minutes). */
  RELAY_MAX_STREAM_MS?: string;
  /** "on" turns on the console's local test-card payment flow (`npm start` sets it). Unset/anything else: adding credits is off. */
  PAYMENTS_TEST_MODE?: string;
}

/** The authenticated caller, set by the auth middleware. */
export type Caller = { key: ApiKey; accountId: string };

export type AppEnv = { Bindings: Env; Variables: { caller: Caller } };
