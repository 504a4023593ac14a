// The write-ceiling scenario's Worker (`npm run bench -- --only ceiling`, bench/ceiling.ts): bench-only,
// never deployed. It imports the tree's own `flushGenerations` (src/db/generations.ts) and
// `generationRecord` (src/generations/record.ts) and is bundled by bench/ceiling.ts with esbuild; its D1
// is the bench's local D1 with the tree's migrations/ applied. Each POST /flush is one ledger's alarm
// copying one batch of its outbox to D1: `n` records of that ledger's account, built as the request path
// builds them, flushed in one `flushGenerations` call.
//
//   POST /flush {"ledger": 3, "n": 500} → {n, d1_ms, rows_written, size_after, statements}
//   GET  /size                          → {bytes (D1's size_after), generations, attempts}
//   GET  /info                          → what the synthetic records are like (bytes as JSON, attempts)
//   POST /fold                          → the Cron Trigger's health fold (foldMinutes, the tree's windows)
//                                         over the minute rollups in D1: {attempts (Σ counted), statements: [{d1_ms, rows_read}]}; prunes nothing
//
// Records: a fixed pool of POOL varied records (models and carriers from the catalog sample the bench
// passes in SAMPLE, 1 or 2 carrier attempts, tokens, user agents, referers, sessions, some failures),
// made once with generationRecord and kept as JSON templates. A flushed record is a template with a new
// id made as the request path makes it (src/generations/generation-id.ts), its ledger's account and key,
// and the current time in `createdAt` and its attempts' `at`: building one costs a few string joins, not a
// JSON.stringify.
import { flushGenerations } from "../src/db/generations";
import { generationRecord } from "../src/generations/record";
import { newGenerationId } from "../src/generations/generation-id";
import { foldMinutes } from "../src/db/endpoint-minutes";
import { PERCENTILES_WINDOW_MS, UPTIME_WINDOWS_MS } from "../src/health/health-snapshot";
import { mulberry32 } from "../src/routing/mulberry32";

const POOL = 512;
/** Stand-ins replaced per record; numbers that no real field holds. */
const ID = "@@id@@";
const ACCOUNT = "@@account@@";
const KEY = "@@key@@";
const CREATED = 9_000_000_000_001;
const AT_FIRST = 9_000_000_000_002;
const AT_SECOND = 9_000_000_000_003;
const SLOTS = new RegExp(`(${[ID, ACCOUNT, KEY, CREATED, AT_FIRST, AT_SECOND].join("|")})`);

/** A seeded PRNG (the tree's mulberry32): the same pool in every run. */
const rng = mulberry32;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const hex = (bytes) => {
  let s = "";
  for (const b of bytes) s += HEX[b];
  return s;
};

const USER_AGENTS = [
  "OpenAI/JS 6.49.0",
  "OpenAI/Python 1.109.1",
  "claude-cli/2.1.332 (external, cli)",
  "codex_cli_rs/0.169.0 (Debian 12.0.0; x86_64) xterm-256color",
  "Anthropic/JS 1.13.0",
  "python-httpx/0.28.1",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Safari/537.36",
];
const REFERERS = ["https://chat.example.com/", "https://app.example.org/workspace", "http://localhost:3000/"];
const APPS = ["Example Chat", "Acme Support Bot", "notes-summarizer"];
const FAILURES = [
  [429, "rate limited by the carrier"],
  [502, "carrier unreachable: connect ECONNREFUSED"],
  [503, "carrier overloaded"],
  [504, "carrier timed out after 30000 ms"],
];

/** One varied record as generationRecord makes it, its per-record fields left as stand-ins. */
function sampleRecord(sample, random) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const model = pick(sample.models);
  const served = pick(model.carriers);
  const twoAttempts = random() < 0.2 && model.carriers.length > 1;
  const failedFirst = twoAttempts ? model.carriers.find((c) => c.slug !== served.slug) : undefined;
  const prompt = Math.floor(50 + random() * random() * 20_000);
  const completion = Math.floor(5 + random() * 1500);
  const reasoning = random() < 0.2 ? Math.floor(random() * 800) : 0;
  const cached = random() < 0.3 ? Math.floor(prompt * random() * 0.8) : 0;
  const latency = Math.floor(120 + random() * 1200);
  const genTime = latency + Math.floor(completion * (5 + random() * 20));
  const failed = random() < 0.04;
  const [failStatus, failMessage] = pick(FAILURES);
  const attempts = [];
  if (failedFirst)
    attempts.push({
      model: model.id,
      provider: failedFirst.slug,
      providerName: failedFirst.name,
      status: pick(FAILURES)[0],
      at: AT_FIRST,
      latencyMs: Math.floor(50 + random() * 2000),
      tokensPerSecond: null,
    });
  attempts.push({
    model: model.id,
    provider: served.slug,
    providerName: served.name,
    status: failed ? failStatus : 200,
    at: failedFirst ? AT_SECOND : AT_FIRST,
    latencyMs: latency,
    tokensPerSecond: failed ? null : Math.round((20 + random() * 400) * 10) / 10,
  });
  const stream = random() < 0.6;
  const facts = {
    genId: ID,
    caller: { accountId: ACCOUNT, key: { hash: KEY } },
    model: model.id,
    app: random() < 0.3 ? pick(APPS) : null,
    stream,
    startedAt: CREATED,
    httpReferer: random() < 0.3 ? pick(REFERERS) : null,
    userAgent: pick(USER_AGENTS),
    externalUser: random() < 0.15 ? `user-${Math.floor(random() * 1e6)}` : null,
    sessionId: random() < 0.25 ? `sess-${hex(Array.from({ length: 8 }, () => Math.floor(random() * 256)))}` : null,
    inboundApi: pick(["chat", "chat", "chat", "messages", "responses"]),
    strategy: twoAttempts ? "fallback" : "direct",
  };
  const outcome = {
    provider: served.name,
    status: failed ? failStatus : 200,
    promptTokens: failed ? 0 : prompt,
    completionTokens: failed ? 0 : completion,
    reasoningTokens: failed ? 0 : reasoning,
    cachedTokens: failed ? 0 : cached,
    cacheWriteTokens: 0,
    cacheDiscountNano: failed ? 0 : cached * 50,
    costNano: failed ? 0 : prompt * 150 + completion * 600,
    finishReason: failed ? null : pick(["stop", "stop", "stop", "length", "tool_calls"]),
    errorMessage: failed ? failMessage : null,
    firstTokenAt: failed ? null : CREATED + latency,
    upstreamId: failed ? null : `chatcmpl-${hex(Array.from({ length: 12 }, () => Math.floor(random() * 256)))}`,
    cancelled: stream && random() < 0.02,
    usageSource: failed ? null : "carrier",
    insured: false,
  };
  return generationRecord(facts, outcome, CREATED + genTime, attempts);
}

/** The pool: each record's JSON split at its stand-ins (odd parts name the stand-in). */
let pool;
function templates(env) {
  if (pool) return pool;
  const sample = typeof env.SAMPLE === "string" ? JSON.parse(env.SAMPLE) : env.SAMPLE;
  const random = rng(27);
  pool = [];
  for (let i = 0; i < POOL; i++) {
    const record = sampleRecord(sample, random);
    // firstTokenAt is folded into latencyMs; the attempts' `at` sit inside the provider_responses string.
    pool.push(JSON.stringify(record).split(SLOTS));
  }
  return pool;
}

/** Per ledger: its account and its keys (one to three), as a real account has. */
const ledgers = new Map();
function ledger(i) {
  let l = ledgers.get(i);
  if (!l) {
    const random = rng(1000 + i);
    const keys = Array.from({ length: 1 + Math.floor(random() * 3) }, () => hex(Array.from({ length: 32 }, () => Math.floor(random() * 256))));
    l = { account: `acct_${hex(Array.from({ length: 12 }, () => Math.floor(random() * 256)))}`, keys, next: 0 };
    ledgers.set(i, l);
  }
  return l;
}

/** `n` record JSONs of ledger `i`, made now. */
function records(env, i, n) {
  const parts = templates(env);
  const l = ledger(i);
  const now = Date.now();
  const out = new Array(n);
  for (let r = 0; r < n; r++) {
    const t = parts[(l.next++ * 7919) % parts.length];
    const id = newGenerationId(now - 2000);
    const key = l.keys[r % l.keys.length];
    let s = "";
    for (let p = 0; p < t.length; p++) {
      const part = t[p];
      if (p % 2 === 0) s += part;
      else if (part === ID) s += id;
      else if (part === ACCOUNT) s += l.account;
      else if (part === KEY) s += key;
      else if (part === String(CREATED)) s += now - 2000;
      else if (part === String(AT_FIRST)) s += now - 1900;
      else s += now - 1500;
    }
    out[r] = s;
  }
  return out;
}

/** The D1 binding with its batch results kept: flushGenerations returns nothing, the meta says what D1 did. */
function observed(db) {
  const seen = { results: [] };
  const d1 = new Proxy(db, {
    get(target, prop) {
      if (prop === "batch")
        return async (statements) => {
          const results = await target.batch(statements);
          seen.results.push(...results);
          return results;
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { d1, seen };
}

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (request.method === "POST" && url.pathname === "/flush") {
        const { ledger: i, n } = await request.json();
        if (!Number.isInteger(i) || i < 0 || !Number.isInteger(n) || n < 1 || n > 10_000) return json({ error: "ledger ≥ 0 and 1 ≤ n ≤ 10000" }, 400);
        const batch = records(env, i, n);
        const { d1, seen } = observed(env.DB);
        await flushGenerations(d1, batch);
        let d1Ms = 0;
        let rowsWritten = 0;
        let sizeAfter = 0;
        for (const r of seen.results) {
          d1Ms += r.meta?.duration ?? 0;
          rowsWritten += r.meta?.rows_written ?? 0;
          sizeAfter = Math.max(sizeAfter, r.meta?.size_after ?? 0);
        }
        return json({ n, d1_ms: d1Ms, rows_written: rowsWritten, size_after: sizeAfter, statements: seen.results.length });
      }
      if (url.pathname === "/size") {
        // D1's own figure (the result meta's size_after): PRAGMA page_count is not authorized in local D1.
        const [generations, attempts] = await env.DB.batch([
          env.DB.prepare("SELECT count(*) AS n FROM generations"),
          env.DB.prepare("SELECT count(*) AS n FROM endpoint_attempts"),
        ]);
        return json({ bytes: attempts.meta?.size_after ?? null, generations: generations.results[0].n, attempts: attempts.results[0].n });
      }
      if (request.method === "POST" && url.pathname === "/fold") {
        // As refreshHealth calls it, but pruning nothing (minutes older than the epoch): the bench's minutes are all recent.
        const now = Date.now();
        const { d1, seen } = observed(env.DB);
        await foldMinutes(
          d1,
          UPTIME_WINDOWS_MS.map((w) => now - w),
          now - PERCENTILES_WINDOW_MS,
          0,
          0,
        );
        const attempts = await env.DB.prepare("SELECT coalesce(sum(counted), 0) AS n FROM endpoint_minutes").first("n");
        // Per statement, in foldMinutes' order: the uptime windows (a day), the percentiles (30 minutes), the two prunes.
        const statements = seen.results.map((r) => ({ d1_ms: r.meta?.duration ?? NaN, rows_read: r.meta?.rows_read ?? NaN }));
        return json({ attempts, statements });
      }
      if (url.pathname === "/info") {
        const sample = records(env, 1_000_000, POOL);
        const bytes = sample.map((s) => new TextEncoder().encode(s).length).sort((a, b) => a - b);
        const attempts = sample.map((s) => (JSON.parse(JSON.parse(s).providerResponses ?? "[]") ?? []).length);
        return json({
          pool: POOL,
          record_bytes_mean: bytes.reduce((a, b) => a + b, 0) / bytes.length,
          record_bytes_p50: bytes[Math.floor(bytes.length / 2)],
          record_bytes_max: bytes[bytes.length - 1],
          attempts_mean: attempts.reduce((a, b) => a + b, 0) / attempts.length,
          example: JSON.parse(sample[0]),
        });
      }
      return json({ error: "not found" }, 404);
    } catch (err) {
      return json({ error: err instanceof Error ? `${err.message}${err.cause ? ` (${String(err.cause)})` : ""}` : String(err) }, 500);
    }
  },
};
