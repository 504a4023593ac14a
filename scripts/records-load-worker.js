// The records store's load test Worker (`npm run records-load`, scripts/records-load.ts): script-only,
// never deployed. It imports the tree's own `storeBatch` (src/generations/store-batches.ts: what the
// records queue's consumer does with one ledger batch), the archive's format and the worker tests' record
// builder (test/worker/synthetic-record.ts); scripts/records-load.ts bundles it with esbuild and runs it in
// Miniflare with a local D1 (`DB`, the tree's migrations applied) and R2 (`ARCHIVE`) persisted to a
// temporary directory. The ledger's acknowledgement is a no-op (the ledger is not what is measured).
//
//   POST /store {account, seq, records: [i…], n, day0, spanMs, crash?}  one batch of those records, stored;
//                 `crash` ("claimed" | "written" | "committed" | "acknowledged") throws after that step
//                 → {parts, sums: {requests, prompt, completion, cached, cache_write, cost}} or 500 {crashed}
//   GET  /size                    D1's size as D1 reports it; rows of the parts' index, rollups, attempts
//   GET  /index                   the parts' index totals
//   GET  /list                    the bucket as listed: objects and bytes
//   POST /verify {offset, limit}  reads parts in index order and checks each against its row; returns the records' i
//   GET  /rollups                 Σ of every rollup column, and per account requests and cost
//   POST /prune-attempts {before} the health fold's prune of endpoint attempts
//
// Record i of n is created at day0 + (i + ½)·spanMs/n (time order, as records arrive); scripts/records-load.ts
// says whose it is. Its id and its carrier's completion id are fixed by i (a batch sent again is the same
// batch) and random-looking; the completion id ends with i in hex, so reading a part back says which
// records it holds. Model, key, carrier and API vary per account and record as a real account's do.
import { storeBatch } from "../src/generations/store-batches";
import { lineRecord, sha256Bytes, utcDay } from "../src/generations/archive-format";
import { syntheticRecord } from "../test/worker/synthetic-record";

const MODELS = [
  "openai/gpt-oss-20b",
  "openai/gpt-oss-120b",
  "meta-llama/llama-3.1-8b-instruct",
  "meta-llama/llama-3.3-70b-instruct",
  "qwen/qwen3-32b",
  "mistralai/mistral-small-3.2-24b-instruct",
  "deepseek/deepseek-chat-v3.1",
  "google/gemma-3-27b-it",
];
const CARRIERS = ["Sim Carrier", "Other Carrier", "Third Carrier"];

export const accountId = (a) => `acct_load${String(a).padStart(7, "0")}`;

const json = (value, status = 200) => new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });

/** `digits` hex digits that look random and depend only on (i, salt). */
function noise(i, salt, digits) {
  let a = (Math.imul(i, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b)) >>> 0;
  let out = "";
  while (out.length < digits) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out += ((t ^ (t >>> 14)) >>> 0).toString(16).padStart(8, "0");
  }
  return out.slice(0, digits);
}
const pick = (list, i, salt) => list[parseInt(noise(i, salt, 6), 16) % list.length];

/** Account a's habits: two or three models, one or two keys, one or two carriers a model. */
function habits(a) {
  const models = [0, 1, 2].slice(0, 2 + (a % 2)).map((k) => MODELS[(a * 3 + k * 5) % MODELS.length]);
  const keys = [0, 1].slice(0, 1 + ((a >> 1) % 2)).map((k) => noise(a, 100 + k, 64));
  return { models, keys, carriers: CARRIERS.slice(0, 1 + ((a >> 2) % 2)) };
}

/** Record i of account a, as its ledger settled it. */
export function loadRecord(a, i, o) {
  const createdAt = o.day0 + Math.floor(((i + 0.5) * o.spanMs) / o.n);
  const h = habits(a);
  const prompt = 50 + (parseInt(noise(i, 3, 6), 16) % 8000);
  const completion = 5 + (parseInt(noise(i, 4, 6), 16) % 1200);
  return syntheticRecord(accountId(a), createdAt, i, {
    id: `gen-${createdAt.toString(16).padStart(12, "0")}${noise(i, 1, 20)}`,
    upstreamId: `chatcmpl-${noise(i, 2, 16)}${i.toString(16).padStart(8, "0")}`,
    app: "records-load",
    model: pick(h.models, i, 5),
    keyHash: pick(h.keys, i, 6),
    providerName: pick(h.carriers, i, 7),
    inboundApi: parseInt(noise(i, 8, 2), 16) < 26 ? "messages" : "chat",
    tokensPrompt: prompt,
    tokensCompletion: completion,
    tokensCached: parseInt(noise(i, 9, 2), 16) < 77 ? Math.floor(prompt / 3) : 0,
    tokensCacheWrite: parseInt(noise(i, 10, 2), 16) < 13 ? 1024 : 0,
    costNano: prompt * 150 + completion * 600 + (i % 7),
  });
}

class Crash extends Error {}

async function store(env, o) {
  const records = o.records.map((i) => loadRecord(o.account, i, o));
  const batch = {
    v: 1,
    accountId: accountId(o.account),
    batch: `${accountId(o.account)}:${o.seq}-${o.seq + records.length - 1}`,
    items: records.map((r) => ({ record: JSON.stringify(r) })),
  };
  const sums = { requests: 0, prompt: 0, completion: 0, cached: 0, cache_write: 0, cost: 0 };
  for (const r of records) {
    sums.requests++;
    sums.prompt += r.tokensPrompt;
    sums.completion += r.tokensCompletion;
    sums.cached += r.tokensCached;
    sums.cache_write += r.tokensCacheWrite;
    sums.cost += r.costNano;
  }
  await storeBatch(
    {
      d1: env.DB,
      bucket: env.ARCHIVE,
      acknowledge: async () => {},
      now: Date.now,
      afterStep: (step) => {
        if (step === o.crash) throw new Crash(`crashed after ${step}`);
      },
    },
    batch,
  );
  return { parts: new Set(records.map((r) => utcDay(r.createdAt))).size, bytes: batch.items.reduce((s, it) => s + it.record.length, 0), sums };
}

async function size(env) {
  const probe = await env.DB.prepare("SELECT 1").run();
  const counts = await env.DB.prepare(
    "SELECT (SELECT count(*) FROM archive_parts) AS parts, (SELECT count(*) FROM record_rollups) AS rollups, (SELECT count(*) FROM endpoint_attempts) AS attempts, (SELECT count(*) FROM generations) AS generations",
  ).first();
  return { size_after: typeof probe.meta.size_after === "number" ? probe.meta.size_after : null, ...counts };
}

async function indexFigures(env) {
  return env.DB.prepare(
    "SELECT count(*) AS objects, coalesce(sum(records), 0) AS records, coalesce(sum(bytes), 0) AS bytes, coalesce(sum(cost_nano), 0) AS cost_nano, (SELECT count(*) FROM archive_parts WHERE state <> 'archived') AS writing FROM archive_parts WHERE state = 'archived'",
  ).first();
}

/** Every object in the bucket (listing: this test only; the service never lists). */
async function list(env) {
  let objects = 0;
  let bytes = 0;
  let cursor;
  for (let page = 0; page < 100_000; page++) {
    const listed = await env.ARCHIVE.list({ cursor, limit: 1000 });
    for (const o of listed.objects) {
      objects++;
      bytes += o.size;
    }
    if (!listed.truncated) break;
    cursor = listed.cursor;
  }
  return { objects, bytes };
}

async function gunzipText(bytes) {
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

/**
 * Reads parts in index order and checks each against its index row (bytes, checksum, count, cost, first
 * and last time, each record of the part's account and day, ordered by (created_at, id)); returns the
 * index i of every record read (from its completion id), so the caller sees each record once.
 */
async function verify(env, o) {
  const { results: parts } = await env.DB.prepare(
    "SELECT account_id, day, part, key, records, bytes, sha256, cost_nano, first_at, last_at FROM archive_parts WHERE state = 'archived' ORDER BY account_id, day, part LIMIT ?1 OFFSET ?2",
  )
    .bind(o.limit, o.offset)
    .all();
  const out = { objects: 0, records: 0, bytes: 0, raw_bytes: 0, cost_nano: 0, errors: [], seen: [] };
  const fail = (key, what) => out.errors.length < 20 && out.errors.push(`${key}: ${what}`);
  for (const p of parts) {
    const object = await env.ARCHIVE.get(p.key);
    if (!object) {
      fail(p.key, "missing");
      continue;
    }
    const bytes = new Uint8Array(await object.arrayBuffer());
    if (bytes.length !== p.bytes) fail(p.key, `${bytes.length} bytes, the index says ${p.bytes}`);
    if ((await sha256Bytes(bytes)) !== p.sha256) fail(p.key, "checksum differs from the index");
    const text = await gunzipText(bytes);
    const records = text
      .split("\n")
      .filter((l) => l !== "")
      .map(lineRecord);
    if (records.length !== p.records) fail(p.key, `${records.length} records, the index says ${p.records}`);
    let cost = 0;
    let prev = null;
    for (const r of records) {
      cost += r.costNano;
      if (r.accountId !== p.account_id || utcDay(r.createdAt) !== p.day) fail(p.key, `record ${r.id} is not of ${p.account_id} on ${p.day}`);
      if (prev && !(prev.createdAt < r.createdAt || (prev.createdAt === r.createdAt && prev.id < r.id))) fail(p.key, `record ${r.id} is not after ${prev.id}`);
      prev = r;
      out.seen.push(parseInt(r.upstreamId.slice(-8), 16));
    }
    if (cost !== p.cost_nano) fail(p.key, `cost ${cost}, the index says ${p.cost_nano}`);
    if (records.length && (records[0].createdAt !== p.first_at || records.at(-1).createdAt !== p.last_at))
      fail(p.key, "first or last time differs from the index");
    out.objects++;
    out.records += records.length;
    out.bytes += bytes.length;
    out.raw_bytes += new TextEncoder().encode(text).length;
    out.cost_nano += cost;
  }
  return out;
}

async function rollups(env) {
  const total = await env.DB.prepare(
    "SELECT count(*) AS rows, coalesce(sum(requests), 0) AS requests, coalesce(sum(tokens_prompt), 0) AS prompt, coalesce(sum(tokens_completion), 0) AS completion, coalesce(sum(tokens_cached), 0) AS cached, coalesce(sum(tokens_cache_write), 0) AS cache_write, coalesce(sum(cost_nano), 0) AS cost FROM record_rollups",
  ).first();
  const { results } = await env.DB.prepare(
    "SELECT account_id, sum(requests) AS requests, sum(cost_nano) AS cost FROM record_rollups GROUP BY account_id",
  ).all();
  return { total, accounts: results };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      switch (`${request.method} ${url.pathname}`) {
        case "POST /store":
          try {
            return json(await store(env, await request.json()));
          } catch (err) {
            if (err instanceof Crash) return json({ crashed: err.message }, 500);
            throw err;
          }
        case "GET /size":
          return json(await size(env));
        case "GET /index":
          return json(await indexFigures(env));
        case "GET /list":
          return json(await list(env));
        case "POST /verify":
          return json(await verify(env, await request.json()));
        case "GET /rollups":
          return json(await rollups(env));
        case "POST /prune-attempts": {
          const o = await request.json();
          const result = await env.DB.prepare("DELETE FROM endpoint_attempts WHERE at < ?1").bind(o.before).run(); // src/db/endpoint-attempts.ts
          return json({ deleted: result.meta.changes });
        }
        default:
          return json({ error: "not found" }, 404);
      }
    } catch (err) {
      return json({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }, 500);
    }
  },
};
