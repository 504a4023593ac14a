import { count, between, text, inWranglerToml, type Spec } from "./spec";

/** The request path: carriers, bodies, the relay, free-model limits, health and routing. */
export const REQUEST_PATH_SETTINGS = {
  CARRIER_TIMEOUT_MS: count(
    60_000,
    "per-attempt time to the carrier's whole answer (non-stream) or its headers (stream), and the longest silence mid-stream, ms",
  ),
  CARRIER_BASE_URL_OVERRIDE: text(
    "var, local only",
    "sends every carrier to `<url>/<slug>/v1` (the simulator); the only carrier URL that may be plain `http://`",
  ),
  BODY_DRAIN_MAX_BYTES: count(
    64 * 1024 * 1024,
    "most bytes of an unread request body (the rest of an oversized one) read and discarded before answering, so the answer reaches the client",
    "67108864 = 64 MiB",
  ),
  BODY_DRAIN_MAX_MS: count(10_000, "longest time spent on that drain, ms"),
  RELAY_MAX_EVENT_BYTES: count(
    8 * 1024 * 1024,
    "largest single stream event relayed, in bytes; a larger one ends the stream with a 502 error chunk",
    "8388608 = 8 MiB",
  ),
  RELAY_MAX_STREAM_BYTES: count(256 * 1024 * 1024, "most bytes a carrier's stream may send", "268435456 = 256 MiB"),
  RELAY_MAX_STREAM_MS: count(25 * 60_000, "longest a stream may run from the request's arrival, ms", "1500000 = 25 min"),
  RELAY_AFTER_DONE_MS: count(
    1_000,
    "how long a carrier's body may take to end after its `[DONE]`, ms; then its connection is kept for the next request; past it (or past `RELAY_MAX_EVENT_BYTES` more bytes) the connection is closed. The caller's stream has ended already; the request settles after it",
  ),
  UNKNOWN_PARAMETERS_NAMED: between(
    1,
    1_000,
    count(20, "most unknown chat fields named in `x-switchyard-unknown-parameters` and the routing metadata; the rest are counted (`(N more)`)"),
  ),
  RELAY_PING_MS: count(
    10_000,
    "a stream whose carrier has been silent this long gets a keep-alive event, and again each time as long, where the caller's protocol has one (Anthropic's `ping` on /messages), ms",
  ),
  RELAY_USAGE_WAIT_MS: between(
    1,
    20_000,
    count(
      5_000,
      "a caller who leaves a stream after every choice finished does not end the carrier call: its usage is read for up to this long (the record then says `usage_source: carrier`), else the estimate of what was delivered is charged, ms (with `SETTLE_RETRY_BUDGET_MS`, keep it inside waitUntil's 30 s)",
    ),
  ),
  EMBEDDINGS_MAX_ANSWER_BYTES: count(
    64 * 1024 * 1024,
    "largest embeddings answer read from a carrier, in bytes; a larger one is unusable and the next carrier is tried",
    "67108864 = 64 MiB",
  ),
  FREE_REQUESTS_PER_MINUTE: count(20, "free-model requests an account may make in any 60 s"),
  COUNT_TOKENS_PER_MINUTE: count(
    60,
    "token counts (`POST /messages/count_tokens`) one API key may ask for in any 60 s; more are refused with 429 and the rate-limit headers",
  ),
  FREE_REQUESTS_PER_DAY: count(50, "free-model requests an account may make a UTC day while its credit grants total less than the threshold"),
  FREE_REQUESTS_PER_DAY_BOUGHT: count(1000, "the same once they total the threshold or more"),
  FREE_BOUGHT_THRESHOLD_USD: count(10, "that threshold, whole USD of credits ever granted"),
  HEALTH_CONSECUTIVE_FAILURES: inWranglerToml(
    count(
      3,
      "failures in a row (a carrier fault: 5xx, timeout, unreachable, its own 401/402/403/404) after which an isolate tries a carrier for a model after the others",
    ),
  ),
  HEALTH_FAILURE_MEMORY_S: inWranglerToml(count(30, "seconds after its last failure that an isolate forgets such a streak, so the carrier is probed again")),
  HEALTH_OUTAGE_UPTIME_PERCENT: inWranglerToml(count(80, "a carrier whose uptime over the last 5 minutes is below this percent is tried after the others…")),
  HEALTH_MIN_ATTEMPTS: inWranglerToml(count(10, "…when at least this many of its attempts counted")),
  HEALTH_MEMO_MS: inWranglerToml(count(30_000, "how long an isolate serves the health snapshot it read from KV before re-reading it in the background, ms")),
  ROUTING_BALANCE: {
    kind: "var (wrangler.toml)",
    shown: "price",
    doc: "`price`: the default order among a model's carriers is drawn weighted by the inverse square of price; `off`: strictly cheapest first",
    fallback: true,
    parse: (raw) => (raw ?? "price").trim() !== "off",
  } satisfies Spec<boolean>,
  ROUTING_SEED: {
    kind: "var",
    doc: "an integer: every request's balancing draw is the same (tests, reproductions); unset = random",
    fallback: null,
    parse: (raw) => (raw?.trim() ? Number.parseInt(raw.trim(), 10) : null),
  } satisfies Spec<number | null>,
};
