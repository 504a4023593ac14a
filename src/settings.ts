import { logWarning } from "./log-error";
import { isolate } from "./isolate";

/**
 * Every setting of the Worker — its vars and secrets, not its bindings — in one table: kind, default,
 * what it does. `settings(env)` parses them all once per env object (once per isolate in production);
 * modules read their part from it. docs/configuration.md is generated from this table
 * (`npm run docs:config`) and a test keeps the two equal. An unset value takes its default; an invalid
 * one too, and is logged once, naming the variable and what it should be.
 */

type Spec<T> = {
  kind: "secret" | "var" | "var (wrangler.toml)" | "var, local only";
  /** What a valid value looks like, for the log line of an invalid one; absent = a whole number ≥ 1. */
  expected?: string;
  /** How the default reads in the docs; absent = no default (unset). */
  shown?: string;
  doc: string;
  /** The value, or `invalid` (then the default applies). */
  parse: (raw: string | undefined) => T | typeof invalid;
  fallback: T;
};

const invalid = Symbol("invalid");

/** Who may create an account on the console (`SIGN_UP`). */
export type SignUpPolicy = "open" | "invite-only" | "closed";

/** A whole number ≥ 1 (a size, a time, a count). */
function count(fallback: number, doc: string, shown = String(fallback)): Spec<number> {
  return {
    kind: "var",
    shown,
    doc,
    fallback,
    parse(raw) {
      if (raw === undefined || raw.trim() === "") return fallback;
      const n = Number(raw);
      return Number.isSafeInteger(n) && n > 0 ? n : invalid;
    },
  };
}

/** The same spec, refusing values outside [min, max]. */
function between(min: number, max: number, spec: Spec<number>): Spec<number> {
  return {
    ...spec,
    expected: `a whole number from ${min} to ${max}`,
    parse: (raw) => {
      const n = spec.parse(raw);
      return n === invalid || n < min || n > max ? invalid : n;
    },
  };
}

/** A non-negative decimal with at most 3 decimals (a percentage, an amount of USD). */
function decimal(fallback: number, doc: string): Spec<number> {
  return {
    kind: "var",
    shown: String(fallback),
    expected: "a decimal number ≥ 0 with at most 3 decimals",
    doc,
    fallback,
    parse(raw) {
      if (raw === undefined || raw.trim() === "") return fallback;
      return /^\d{1,6}(\.\d{1,3})?$/.test(raw.trim()) ? Number(raw.trim()) : invalid;
    },
  };
}

function text(kind: Spec<string>["kind"], doc: string): Spec<string | undefined> {
  return { kind, doc, fallback: undefined, parse: (raw) => (raw === undefined || raw === "" ? undefined : raw) };
}

/** The settings wrangler.toml's [vars] set (`wrangler types` types them); a test holds the list against wrangler.toml. */
export const IN_WRANGLER_TOML = [
  "HEALTH_CONSECUTIVE_FAILURES",
  "HEALTH_FAILURE_MEMORY_S",
  "HEALTH_OUTAGE_UPTIME_PERCENT",
  "HEALTH_MIN_ATTEMPTS",
  "HEALTH_MEMO_MS",
  "ROUTING_BALANCE",
] as const;
export type WranglerTomlVar = (typeof IN_WRANGLER_TOML)[number];

const inWranglerToml = <T>(s: Spec<T>): Spec<T> => ({ ...s, kind: "var (wrangler.toml)" });

export const SETTINGS = {
  ADMIN_TOKEN: text("secret", "guards `/admin`; unset = admin API closed"),
  SIGN_UP: {
    kind: "var",
    shown: "invite-only",
    expected: "open, invite-only or closed",
    doc: "who may create an account on the console's sign-up page: `open` (anyone), `invite-only` (only with an invitation link, `npm run admin -- invite`) or `closed` (nobody: the operator makes accounts, `create-account` then `sign-in-link`); `npm start` runs `open` (docs/deploy.md)",
    fallback: "invite-only",
    parse: (raw) => {
      const v = (raw ?? "").trim() || "invite-only";
      return v === "open" || v === "invite-only" || v === "closed" ? v : invalid;
    },
  } satisfies Spec<SignUpPolicy>,
  SIGN_IN_LINK_TTL_MINUTES: between(
    1,
    10_080,
    count(60, "a one-time sign-in link (`npm run admin -- sign-in-link`, printed by `cloudflare:setup` and `npm start`) works once, within this many minutes"),
  ),
  INVITE_TTL_HOURS: between(1, 2_160, count(168, "an invitation link (`npm run admin -- invite`) signs one person up, within this many hours")),
  REASONING_SEAL_KEY: {
    kind: "secret",
    expected: "at least 32 characters (32 random bytes as base64: `openssl rand -base64 32`)",
    doc: "seals `encrypted_content` on `/responses`: AES-256-GCM under a key derived from it (HKDF-SHA-256), bound to the account, so callers can neither read nor alter it (docs/api/responses.md); at least 32 characters. Unset = `/responses` refuses with 503 a request that asks for `reasoning.encrypted_content` or carries one of our envelopes (everything else works); `npm start` and the tests set a development key, `npm run cloudflare:setup` generates one",
    fallback: undefined,
    parse: (raw) => (raw === undefined || raw === "" ? undefined : raw.length >= 32 ? raw : invalid),
  } satisfies Spec<string | undefined>,
  REASONING_SEAL_KEYS_PREVIOUS: {
    kind: "secret",
    expected: "earlier keys of at least 32 characters each, comma-separated",
    doc: "earlier `REASONING_SEAL_KEY`s, comma-separated: envelopes sealed under them are still opened, never sealed with (rotation: docs/deploy.md); unset = none",
    fallback: [],
    parse: (raw) => {
      const keys = (raw ?? "")
        .split(",")
        .map((k) => k.trim())
        .filter((k) => k !== "");
      return keys.every((k) => k.length >= 32) ? keys : invalid;
    },
  } satisfies Spec<string[]>,
  CARRIER_TIMEOUT_MS: count(
    60_000,
    "per-attempt time to the carrier's whole answer (non-stream) or its headers (stream), and the longest silence mid-stream, ms",
  ),
  CARRIER_BASE_URL_OVERRIDE: text(
    "var, local only",
    "sends every carrier to `<url>/<slug>/v1` (the simulator); the only carrier URL that may be plain `http://`",
  ),
  LEDGER_LEASE_TTL_MS: count(
    120_000,
    "how long a slice lives without a renewal before the ledger expires it (its isolate died); requests renew every quarter of it, ms",
  ),
  LEDGER_HOLD_TTL_MS: count(1_800_000, "the same for a request's own hold, and for a released slice still missing settles, ms (at least the lease TTL)"),
  SETTLE_RETRY_BUDGET_MS: count(
    25_000,
    "how long an isolate retries a settle batch before it hands it to the settle queue, ms (keep it under waitUntil's 30 s)",
  ),
  SETTLE_WINDOW_MS: count(20, "a settle batch (per account and isolate) is sent this long after the settle that opened it; settles meanwhile join it, ms"),
  SETTLE_ATTEMPT_TIMEOUT_MS: count(
    5_000,
    "one settle RPC the ledger has not answered within this long is given up, logged (`ledger did not answer a settle batch within … ms`, with its generation ids and amounts) and retried; settles are idempotent, so one that lands late applies once; each attempt is also cut to what is left of the retry budget, ms",
  ),
  RECORDS_FLUSH_DELAY_MS: count(
    1_000,
    "how soon after a settle an account's ledger sends its new generation records to the records queue (batches for all settled meanwhile), ms. A record reaches R2 within this, the queue's batch timeout (wrangler.toml, 1 s) and the consumer's own time",
  ),
  RECORDS_FLUSH_BATCH: count(
    500,
    "most records one alarm of the ledger sends to the records queue; more go at once by the next alarm. They travel in batches of at most 100 KB of records (one queue message each)",
  ),
  RECORDS_ACK_TIMEOUT_MS: count(
    60_000,
    "a record batch the records store has not acknowledged this long after the ledger sent it is sent again (the same batch: stored once however often it arrives), ms",
  ),
  RECORDS_RETENTION_DAYS: between(
    2,
    36_500,
    count(
      30,
      "generation records older than this many UTC days (counted from the start of today) leave D1 for the R2 archive, once archived and verified (docs/storage.md); at least 2, so the activity page's 48-hour view reads D1 only",
    ),
  ),
  RECORDS_ARCHIVE_PART_RECORDS: between(
    100,
    40_000,
    count(10_000, "most records in one archive object (a part of an account's UTC day); a larger day is written as several parts"),
  ),
  RECORDS_ARCHIVE_PARTS_PER_RUN: between(1, 1_000_000, count(5_000, "most archive objects one Cron Trigger run (once a minute) writes")),
  RECORDS_ARCHIVE_RUN_MS: between(
    1_000,
    600_000,
    count(40_000, "a Cron Trigger run starts no archive part after this long, ms (runs are a minute apart; one still running when the next starts is safe)"),
  ),
  RECORDS_ARCHIVE_CONCURRENCY: between(1, 16, count(4, "account-days one archive run works on at once (each a part at a time)")),
  RECORDS_COMPACT_AFTER_MS: between(
    1,
    86_400_000,
    count(
      600_000,
      "the records queue's small objects (under half of RECORDS_ARCHIVE_PART_RECORDS records) stored at least this long ago are merged, per account and UTC day, into objects of up to RECORDS_ARCHIVE_PART_RECORDS records by the Cron Trigger, ms: the index of parts stays small",
    ),
  ),
  RECORDS_COMPACT_DAYS_PER_RUN: between(1, 100_000, count(200, "most account-days one Cron Trigger run compacts (one merged object each)")),
  RECORDS_COMPACT_DELETE_AFTER_MS: between(
    60_000,
    604_800_000,
    count(3_600_000, "objects merged away are deleted from R2 this long after the merge, ms (a reader that listed them just before still reads them)"),
  ),
  RECORDS_ARCHIVE_READS_PER_PAGE: between(
    1,
    100,
    count(8, "most archive objects one activity page or CSV step reads; a page that would need more ends early, with a link to the rest"),
  ),
  D1_SIZE_LIMIT_BYTES: count(
    10_000_000_000,
    "the D1 database's size limit (Cloudflare's: 10 GB a database on Workers Paid), for the audit and the warning below, bytes",
    "10000000000 = 10 GB",
  ),
  D1_SIZE_WARN_PERCENT: between(1, 100, count(80, "a log line (`d1 size warning`) each archive run while D1 is past this percent of that limit")),
  BODY_DRAIN_MAX_BYTES: count(
    64 * 1024 * 1024,
    "most bytes of an unread request body (the rest of an oversized one) read and discarded before answering, so the answer reaches the client",
    "67108864 = 64 MiB",
  ),
  BODY_DRAIN_MAX_MS: count(10_000, "longest time spent on that drain, ms"),
  PAYMENT_ABANDON_AFTER_MS: count(
    900_000,
    "a payment whose Checkout Session was never created (the call failed or its reply was lost) is given up (`failed`) by reconciliation after this long, ms",
    "900000 = 15 min",
  ),
  PAYMENT_CHECKOUT_EXPIRY_S: between(
    1_800,
    86_400,
    count(3_600, "a Checkout Session not paid within this long expires at Stripe (which allows 1800 to 86400), and its payment fails, s", "3600 = 1 h"),
  ),
  STRIPE_WEBHOOK_MAX_BYTES: count(1024 * 1024, "largest Stripe webhook body read; a larger one is refused with 413", "1048576 = 1 MiB"),
  PAYMENTS_RECONCILE_BATCH: count(100, "most unfinished payments one Cron Trigger run looks at, those Stripe was asked about least recently first"),
  PAYMENTS_RECONCILE_PER_ACCOUNT: count(3, "most payments of one account one Cron Trigger run looks at: no account's open checkouts fill a run"),
  PAYMENTS_PAGE_RECONCILE: count(
    3,
    "most unfinished payments of its account one credits page load asks Stripe about (the one just paid first); the Cron Trigger finishes the rest",
  ),
  PAYMENTS_PAGE_RECHECK_S: count(
    60,
    "a credits page asks Stripe about one unfinished payment at most once in this long (the one it came back from always): reloading the page asks nothing again, s",
  ),
  PAYMENT_MAX_OPEN_CHECKOUTS: count(
    5,
    "most checkouts one account may have unfinished at once; one more is refused (429) on the credits page until one is paid, cancelled or expires",
  ),
  PAYMENT_MAX_CHECKOUTS_PER_HOUR: count(10, "most checkouts one account may start in any 60 minutes; one more is refused (429) on the credits page"),
  STRIPE_CALLS_PER_ACCOUNT_MINUTE: count(
    30,
    "most Stripe API calls the console makes for one account in any minute (starting, resuming, cancelling a checkout; its page's reconciliation); over it a checkout is refused (429) and the page shows what it knows",
  ),
  STRIPE_PAGE_CALLS_PER_MINUTE: count(
    300,
    "most Stripe API calls all credits page loads together make for reconciliation in any minute; over it pages skip asking and the Cron Trigger finishes their payments",
  ),
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
  STRIPE_SECRET_KEY: text(
    "secret",
    "Stripe's secret key (`sk_live_…`, `sk_test_…`): with `STRIPE_WEBHOOK_SECRET`, the console sells credits through Stripe Checkout; unset = adding credits is off",
  ),
  STRIPE_WEBHOOK_SECRET: text(
    "secret",
    "the signing secret (`whsec_…`) of the Stripe webhook endpoint `<origin>/webhooks/stripe`: only events signed with it are acted on",
  ),
  STRIPE_API_URL: text(
    "var, local only",
    "sends Stripe API calls to this `http://host:port` (the Stripe simulator `npm start` runs) instead of api.stripe.com",
  ),
  PAYMENT_MIN_USD: count(5, "smallest amount of credits one payment may buy, whole USD"),
  PAYMENT_MAX_USD: count(1000, "largest amount of credits one payment may buy, whole USD"),
  PLATFORM_FEE_PERCENT: decimal(
    5.5,
    "the platform fee added to a credits purchase at checkout, percent of the credits (shown before paying, recorded apart from the credits)",
  ),
  PLATFORM_FEE_MIN_USD: decimal(0.8, "the smallest platform fee, USD (cents)"),
};

export type SettingName = keyof typeof SETTINGS;
/** The parsed settings: each variable's value, typed by its table entry. */
export type Settings = { readonly [K in SettingName]: (typeof SETTINGS)[K]["fallback"] | Exclude<ReturnType<(typeof SETTINGS)[K]["parse"]>, typeof invalid> };
/** What settings are read from: the Worker's env (or, in pure tests, any object with some of the variables). */
export type SettingsSource = Partial<Record<SettingName, string>> | object;

/** Parsed settings by env object (an isolate sees one env; tests make others). */
const parsedSettings = isolate.slot("settings", () => new WeakMap<object, Settings>());

/** The Worker's settings, parsed once per env object. */
export function settings(env: SettingsSource): Settings {
  const parsed = parsedSettings.get();
  const known = parsed.get(env);
  if (known) return known;
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(SETTINGS) as Array<[SettingName, Spec<unknown>]>) {
    const raw: unknown = Reflect.get(env, name);
    const value = spec.parse(typeof raw === "string" ? raw : undefined);
    if (value === invalid)
      logWarning("invalid setting: the default applies", { setting: name, expected: spec.expected ?? "a whole number ≥ 1", default: String(spec.fallback) });
    out[name] = value === invalid ? spec.fallback : value;
  }
  const result = out as Settings;
  parsed.set(env, result);
  return result;
}

/** docs/configuration.md's table of settings, from SETTINGS (`npm run docs:config` writes it; a test compares). */
export function settingsTable(): string {
  const rows = (Object.entries(SETTINGS) as Array<[SettingName, Spec<unknown>]>).map(
    ([name, s]) => `| \`${name}\` | ${s.kind} | ${s.doc}${s.shown ? ` (default ${s.shown})` : ""} |`,
  );
  return ["| Name | Kind | Meaning |", "|---|---|---|", ...rows].join("\n");
}
