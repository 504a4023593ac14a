// The records-store ceiling scenario's Worker (`npm run bench -- --only ceiling`, bench/ceiling.ts):
// bench-only, never deployed. It imports the tree's own `storeBatch` (src/generations/store-batches.ts),
// the queue consumer's whole work for one ledger batch, and the worker tests' record builder
// (test/worker/synthetic-record.ts); bench/ceiling.ts bundles it with esbuild and runs it in Miniflare with
// a local D1 (`DB`, the tree's migrations applied) and R2 (`ARCHIVE`) persisted to a temporary directory.
// The ledger's acknowledgement is a no-op: what is measured is the consumer (R2 put, D1 claim and commit
// with the rollups), not the Durable Object.
//
//   POST /store {account, n, attempts?} → {n, parts, rollups, ms, d1_ms, rows_written, r2_ms}
//                               one batch of `n` new records of account `account` (0-based), stored once
//                               (`attempts: false`: the records carry no carrier attempts, so no
//                               endpoint_attempts rows: what D1 writes for the store alone)
//   GET  /size               → {bytes (D1's size_after), parts, rollups, attempts}
//   GET  /info               → what the synthetic records are like (bytes as JSON, rollup rows per record)
//   POST /outbox {n, batch}   → the ledger's side (OutboxBench): SQLite rows its outbox writes per record
//
// Accounts: ACCOUNTS of them, each with one to three keys, two to four models of the catalog sample the
// bench passes in SAMPLE (each served by one of its carriers, some by two), APIs mostly chat. Each account
// has its own clock, starting somewhere in a day and moving 1–20 s a record, so its batches run through
// the hours (and now and then across midnight: two parts) as a busy account's would. Records are
// `syntheticRecord`s (≈ 1 KB of JSON) with those fields, their costs and tokens varied.
import { DurableObject } from "cloudflare:workers";
import { storeBatch } from "../src/generations/store-batches";
import { migrateLedger } from "../src/ledger/ledger-sql";
import { RecordsOutbox } from "../src/ledger/records-outbox";
import { settleBatch } from "../src/ledger/object/settles";
import { ledgerTimings } from "../src/ledger/ledger-config";
import { syntheticRecord } from "../test/worker/synthetic-record";
import { mulberry32 } from "../src/routing/mulberry32";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const BASE = Date.UTC(2026, 9, 1);
const APIS = ["chat", "chat", "chat", "messages", "responses"];

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const hex = (random, n) => {
  let s = "";
  for (let i = 0; i < n; i++) s += HEX[Math.floor(random() * 256)];
  return s;
};

let sample;
const accounts = new Map();
/** Account `i`: its id, keys, models with their carriers, its clock and its outbox's next sequence number. */
function account(env, i) {
  let a = accounts.get(i);
  if (a) return a;
  sample ??= typeof env.SAMPLE === "string" ? JSON.parse(env.SAMPLE) : env.SAMPLE;
  const random = mulberry32(1000 + i);
  const models = Array.from({ length: 2 + Math.floor(random() * 3) }, () => {
    const m = sample.models[Math.floor(random() * sample.models.length)];
    return { id: m.id, carriers: m.carriers.slice(0, 1 + Math.floor(random() * Math.min(2, m.carriers.length))) };
  });
  a = {
    id: `acct_bench${String(i).padStart(7, "0")}`,
    keys: Array.from({ length: 1 + Math.floor(random() * 3) }, () => hex(random, 32)),
    models,
    clock: BASE + Math.floor(random() * DAY),
    seq: 0,
    random,
  };
  accounts.set(i, a);
  return a;
}

/** `n` new records of account `i`, as its ledger settled them (`attempts` false: without carrier attempts). */
function records(env, i, n, attempts = true) {
  const a = account(env, i);
  const out = [];
  for (let r = 0; r < n; r++) {
    a.clock += 1000 + Math.floor(a.random() * 19_000);
    const k = a.seq + r;
    const model = a.models[Math.floor(a.random() * a.models.length)];
    const carrier = model.carriers[Math.floor(a.random() * model.carriers.length)];
    const prompt = Math.floor(50 + a.random() * a.random() * 20_000);
    const completion = Math.floor(5 + a.random() * 1500);
    out.push(
      syntheticRecord(a.id, a.clock, k, {
        keyHash: a.keys[Math.floor(a.random() * a.keys.length)],
        model: model.id,
        providerName: carrier.name,
        inboundApi: APIS[Math.floor(a.random() * APIS.length)],
        tokensPrompt: prompt,
        tokensCompletion: completion,
        tokensCached: a.random() < 0.3 ? Math.floor(prompt * a.random() * 0.8) : 0,
        costNano: prompt * 150 + completion * 600,
        upstreamId: `chatcmpl-${hex(a.random, 12)}`,
        providerResponses: attempts
          ? JSON.stringify([
              { model: model.id, provider: carrier.slug, providerName: carrier.name, status: 200, at: a.clock, latencyMs: 200, tokensPerSecond: 80 },
            ])
          : "[]",
      }),
    );
  }
  return out;
}

/** Rollup rows a batch touches: its records' distinct hour × model × key × carrier × API (src/generations/store-batches.ts). */
function rollupRows(list) {
  return new Set(list.map((r) => `${Math.floor(r.createdAt / HOUR)}|${r.model}|${r.keyHash}|${r.providerName ?? ""}|${r.inboundApi ?? "chat"}`)).size;
}

/** The D1 binding with its batch results kept (D1's own time and rows written are in their meta). */
function observedD1(db, seen) {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "batch")
        return async (statements) => {
          const results = await target.batch(statements);
          for (const r of results) {
            seen.d1Ms += r.meta?.duration ?? 0;
            seen.rowsWritten += r.meta?.rows_written ?? 0;
          }
          return results;
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The R2 binding with its puts timed. */
function timedBucket(bucket, seen) {
  return new Proxy(bucket, {
    get(target, prop) {
      if (prop === "put")
        return async (...args) => {
          const t = performance.now();
          try {
            return await target.put(...args);
          } finally {
            seen.r2Ms += performance.now() - t;
          }
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The ledger's outbox (src/ledger/records-outbox.ts) on the ledger's own schema, in a SQLite-backed
 * Durable Object: `n` requests settled one by one (settleBatch: the record rides in the debit's row), sent
 * by alarms of `batch` records each (assign, due, markSent) and acknowledged (stored). SQLite rows written —
 * what Durable Object SQL storage bills, index entries included — are summed per step from each statement's
 * cursor (`rowsWritten`, final once the step has run); at the settle, the debit's own insert and the usage
 * updates (there without records) are counted apart from the rest. An alarm's own setAlarm (billed as one
 * row) is not in these figures.
 */
export class OutboxBench extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    migrateLedger(ctx.storage.sql);
  }

  run(n, batch, accountId) {
    const cursors = [];
    const sql = new Proxy(this.ctx.storage.sql, {
      get(target, prop) {
        if (prop === "exec")
          return (...args) => {
            const c = target.exec(...args);
            const q = String(args[0]);
            c.kind = q.startsWith("INSERT OR IGNORE INTO debits") ? "debit" : /^(UPDATE account|INSERT INTO key_usage)/.test(q) ? "usage" : "other";
            cursors.push(c);
            return c;
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const outbox = new RecordsOutbox(sql);
    const written = (kind) =>
      cursors.splice(0).reduce((s, c) => {
        if (kind === undefined || c.kind === kind) return s + c.rowsWritten;
        kinds[c.kind] += c.rowsWritten;
        return s;
      }, 0);
    const kinds = { debit: 0, usage: 0, other: 0 };
    const now = Date.now();
    const storage = this.ctx.storage;
    const db = { sql, transaction: (f) => storage.transactionSync(f), now: () => now, timings: ledgerTimings({}), outbox, scheduleAlarm: () => {} };
    for (let i = 0; i < n; i++) {
      const record = syntheticRecord(accountId, now + i, i);
      settleBatch(db, [{ genId: record.id, keyHash: record.keyHash, costNano: record.costNano, record }]);
    }
    const settle = written("other");
    let send = 0;
    let stored = 0;
    let batches = 0;
    for (let guard = 0; guard < 100_000 && outbox.size() > 0; guard++) {
      outbox.assign(batch);
      const due = outbox.due(now);
      outbox.markSent(
        due.map((b) => b.batch),
        now,
      );
      send += written();
      for (const b of due) outbox.stored(b.batch);
      stored += written();
      batches += due.length;
    }
    return { n, batch, batches, settle: settle / n, send: send / n, stored: stored / n, debit: kinds.debit / n, usage: kinds.usage / n };
  }
}

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (request.method === "POST" && url.pathname === "/store") {
        const { account: i, n, attempts } = await request.json();
        if (!Number.isInteger(i) || i < 0 || !Number.isInteger(n) || n < 1 || n > 10_000) return json({ error: "account ≥ 0 and 1 ≤ n ≤ 10000" }, 400);
        const a = account(env, i);
        const list = records(env, i, n, attempts !== false);
        const batch = {
          v: 1,
          accountId: a.id,
          batch: `${a.id}:${a.seq + 1}-${a.seq + n}`,
          items: list.map((r) => ({ record: JSON.stringify(r) })),
        };
        const seen = { d1Ms: 0, rowsWritten: 0, r2Ms: 0 };
        const t = performance.now();
        await storeBatch({ d1: observedD1(env.DB, seen), bucket: timedBucket(env.ARCHIVE, seen), acknowledge: async () => {}, now: Date.now }, batch);
        const ms = performance.now() - t;
        // Only a stored batch moves the account's sequence on (a failed one is sent again with the same id).
        a.seq += n;
        return json({
          n,
          parts: new Set(list.map((r) => Math.floor(r.createdAt / DAY))).size,
          rollups: rollupRows(list),
          ms,
          d1_ms: seen.d1Ms,
          rows_written: seen.rowsWritten,
          r2_ms: seen.r2Ms,
        });
      }
      if (request.method === "POST" && url.pathname === "/outbox") {
        const { n, batch } = await request.json();
        const stub = env.OUTBOX.get(env.OUTBOX.idFromName(`outbox-${batch}-${n}`));
        return json(await stub.run(n, batch, `acct_outbox${batch}`));
      }
      if (url.pathname === "/size") {
        // D1's own figure (the result meta's size_after): PRAGMA page_count is not authorized in local D1.
        const [parts, rollups, attempts] = await env.DB.batch([
          env.DB.prepare("SELECT count(*) AS n FROM archive_parts"),
          env.DB.prepare("SELECT count(*) AS n FROM record_rollups"),
          env.DB.prepare("SELECT count(*) AS n FROM endpoint_attempts"),
        ]);
        return json({ bytes: attempts.meta?.size_after ?? null, parts: parts.results[0].n, rollups: rollups.results[0].n, attempts: attempts.results[0].n });
      }
      if (url.pathname === "/info") {
        const list = records(env, 1_000_000, 500);
        const bytes = list.map((r) => new TextEncoder().encode(JSON.stringify(r)).length).sort((x, y) => x - y);
        return json({
          record_bytes_mean: bytes.reduce((s, b) => s + b, 0) / bytes.length,
          record_bytes_max: bytes[bytes.length - 1],
          example: list[0],
        });
      }
      return json({ error: "not found" }, 404);
    } catch (err) {
      return json({ error: err instanceof Error ? `${err.message}${err.cause ? ` (${String(err.cause)})` : ""}` : String(err) }, 500);
    }
  },
};
