// `npm run records-load [-- --records N]`: the records store (issue 36) at scale, locally. A script-only
// Worker (scripts/records-load-worker.js: the tree's storeBatch, what the records queue's consumer does
// with one ledger batch) runs in Miniflare with D1 and R2 persisted to a temporary directory, the tree's
// migrations applied. This process plays the ledgers and the queue: N synthetic records (default
// 1,000,000; ≈ 1 KB of JSON each, test/worker/synthetic-record.ts) over `--days` UTC days and `--accounts`
// accounts (a Zipf law: a few busy accounts, a long tail), in time order; each account's records are
// batched as its ledger batches them — the records of one flush window (`--window-min` of the records'
// time) in one batch of at most `--max-batch` records (≈ the 100 KB of a queue message), so busy accounts
// send full batches and quiet ones batches of one or two — and stored, `--concurrency` at a time, in the
// order they close. Every `--duplicate-every`-th batch is delivered twice; every `--crash-every`-th is
// first delivered with a crash after one of storeBatch's steps (claimed, written, committed,
// acknowledged, in turn), then again. A store that fails otherwise is delivered again (as the queue
// does), at most 5 times.
//
// Then it checks: the parts' index holds every record once (count and Σ cost as seeded, none left
// `writing`); the bucket's listing equals the index; every object read back matches its index row
// (checksum, count, cost, each record of the part's account and day, in order) and, across all of
// them, each record 0..N−1 is read exactly once; Σ of every `record_rollups` column (requests, tokens in,
// out, cached, cache write, cost) equals the seeded sums exactly, and so do each account's requests and
// cost. D1's size is measured as D1 reports it (`size_after`), as SQLite's pages in use (from the
// database files) and on disk: as the run left it, with the carrier attempts pruned to the health
// fold's day and an hour, then without any attempts and without the rollups (what each takes).
//
// Prints a markdown table (and `--json FILE` writes every figure). Exit 0 when every check holds, 1 when
// one fails, 2 on a usage error. Everything is on 127.0.0.1; every loop and request is bounded in time.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { d1File, diskBytes, sqlitePages } from "./sqlite-size.ts";
import { applyMigrations, TOOL_WORKER_BUILD } from "./worker-bundle.ts";
import { readWranglerConfig } from "./wrangler-config.ts";

const DAY = 86_400_000;
const root = resolve(import.meta.dirname, "..");
const STEPS = ["claimed", "written", "committed", "acknowledged"] as const;

const USAGE = `usage: npm run records-load -- [--records N] [--accounts N] [--days N] [--window-min M] [--max-batch N]
       [--concurrency N] [--duplicate-every N] [--crash-every N] [--time-limit-s S] [--json FILE] [--keep]
  --records N          synthetic records (default 1000000)
  --accounts N         accounts they are spread over, by a Zipf law (default 200)
  --days N             UTC days they are spread over (default 7)
  --window-min M       an account's flush window in the records' time, minutes (default 120)
  --max-batch N        most records a batch (default 100: ≈ 100 KB, a queue message)
  --concurrency N      batches stored at once (default 8)
  --duplicate-every N  every Nth batch is delivered twice (default 50; 0: none)
  --crash-every N      every Nth batch first crashes after a step, then is delivered again (default 50; 0: none)
  --time-limit-s S     the whole run's bound (default 300 + 3 ms a record)
  --json FILE          also write every figure as JSON
  --keep               keep the temporary directory (D1 and R2 as left)`;

type Options = {
  records: number;
  accounts: number;
  days: number;
  windowMin: number;
  maxBatch: number;
  concurrency: number;
  duplicateEvery: number;
  crashEvery: number;
  timeLimitMs: number;
  json?: string;
  keep: boolean;
};

function usage(message: string): never {
  console.error(`records-load: ${message}\n${USAGE}`);
  process.exit(2);
}

function options(argv: string[]): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        records: { type: "string" },
        accounts: { type: "string" },
        days: { type: "string" },
        "window-min": { type: "string" },
        "max-batch": { type: "string" },
        concurrency: { type: "string" },
        "duplicate-every": { type: "string" },
        "crash-every": { type: "string" },
        "time-limit-s": { type: "string" },
        json: { type: "string" },
        keep: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (err) {
    usage(err instanceof Error ? err.message : String(err));
  }
  if (parsed.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const whole = (name: keyof typeof parsed, fallback: number, min: number, max: number): number => {
    const raw = parsed[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (typeof raw !== "string" || raw.trim() === "" || !Number.isInteger(n) || n < min || n > max)
      usage(`--${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const records = whole("records", 1_000_000, 1, 20_000_000);
  return {
    records,
    accounts: whole("accounts", 200, 1, 100_000),
    days: whole("days", 7, 1, 3650),
    windowMin: whole("window-min", 120, 1, 100_000),
    maxBatch: whole("max-batch", 100, 1, 10_000),
    concurrency: whole("concurrency", 8, 1, 64),
    duplicateEvery: whole("duplicate-every", 50, 0, 1_000_000),
    crashEvery: whole("crash-every", 50, 0, 1_000_000),
    timeLimitMs: whole("time-limit-s", Math.ceil(300 + records * 0.003), 10, 86_400) * 1000,
    json: parsed.json,
    keep: parsed.keep ?? false,
  };
}

class Deadline {
  constructor(readonly at: number) {}
  left(): number {
    return this.at - Date.now();
  }
  check(what: string): void {
    if (Date.now() > this.at) throw new Error(`time limit reached while ${what}`);
  }
}

/** The account of record i: a Zipf law over the accounts (weight 1/rank), by a fixed hash of i. */
function accountsOf(n: number, accounts: number): Uint32Array {
  const cumulative = new Float64Array(accounts);
  let s = 0;
  for (let r = 0; r < accounts; r++) cumulative[r] = s += 1 / (r + 1);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let x = Math.imul(i + 1, 0x9e3779b1) >>> 0;
    x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
    x = (x ^ (x >>> 13)) >>> 0;
    const u = (x / 2 ** 32) * s;
    let lo = 0;
    let hi = accounts - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    out[i] = lo;
  }
  return out;
}

type PlannedBatch = { account: number; seq: number; records: number[]; closes: number };

/**
 * The ledgers' batches: per account, its records in time order, one batch per flush window (at most
 * maxBatch records, the rest in the next batch), numbered by the account's outbox sequence; all of
 * them in the order they close (the last record's index).
 */
function planBatches(n: number, accounts: number, spanMs: number, windowMs: number, maxBatch: number): PlannedBatch[] {
  const owner = accountsOf(n, accounts);
  const open = new Map<number, { batch: PlannedBatch; window: number }>();
  const seq = new Uint32Array(accounts).fill(1);
  const out: PlannedBatch[] = [];
  const close = (a: number) => {
    const o = open.get(a);
    if (!o) return;
    out.push(o.batch);
    seq[a] = seq[a]! + o.batch.records.length;
    open.delete(a);
  };
  for (let i = 0; i < n; i++) {
    const a = owner[i]!;
    const window = Math.floor(((i + 0.5) * spanMs) / n / windowMs);
    const o = open.get(a);
    if (o && (o.window !== window || o.batch.records.length >= maxBatch)) close(a);
    const cur = open.get(a);
    if (cur) {
      cur.batch.records.push(i);
      cur.batch.closes = i;
    } else open.set(a, { batch: { account: a, seq: seq[a]!, records: [i], closes: i }, window });
  }
  for (const a of [...open.keys()]) close(a);
  return out.sort((x, y) => x.closes - y.closes);
}

type Sums = { requests: number; prompt: number; completion: number; cached: number; cache_write: number; cost: number };
type Size = { size_after: number | null; parts: number; rollups: number; attempts: number; generations: number };
type SizeFigures = Size & { live_bytes: number | null; file_bytes: number };

async function bundle(dir: string): Promise<string> {
  const outfile = join(dir, "worker.js");
  await build({ entryPoints: [join(root, "scripts", "records-load-worker.js")], ...TOOL_WORKER_BUILD, outfile });
  return outfile;
}

async function main(): Promise<number> {
  const o = options(process.argv.slice(2));
  const deadline = new Deadline(Date.now() + o.timeLimitMs);
  const dir = mkdtempSync(join(tmpdir(), "switchyard-records-load-"));
  const state = join(dir, "state");
  let mf: Miniflare | undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await mf?.dispose().catch(() => {});
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`records-load: ${signal}, stopping`);
    void stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const started = Date.now();
  const log = (msg: string) => console.error(`[records-load ${((Date.now() - started) / 1000).toFixed(1)} s] ${msg}`);

  try {
    const cfg = readWranglerConfig(join(root, "wrangler.toml"));
    const entry = await bundle(join(dir, "bundle"));
    mf = new Miniflare({
      name: "records-load",
      modules: [{ type: "ESModule", path: entry }],
      modulesRoot: join(dir, "bundle"),
      compatibilityDate: cfg.compatibilityDate,
      compatibilityFlags: cfg.compatibilityFlags,
      d1Databases: ["DB"],
      r2Buckets: ["ARCHIVE"],
      defaultPersistRoot: state,
      host: "127.0.0.1",
      port: 0,
    });
    const url = await mf.ready;
    await applyMigrations(mf, root, "DB");

    /** One request to the Worker: its status and JSON body; a lost connection is retried (every call is safe to repeat), at most 3 times. */
    const request = async <T>(method: "GET" | "POST", path: string, body?: unknown): Promise<{ ok: boolean; status: number; body: T }> => {
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await fetch(new URL(path, url), {
            method,
            headers: body === undefined ? {} : { "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(Math.max(1000, Math.min(300_000, deadline.left()))),
          });
          const text = await res.text();
          return { ok: res.ok, status: res.status, body: JSON.parse(text) as T };
        } catch (err) {
          if (attempt >= 3 || !(err instanceof TypeError)) throw new Error(`${method} ${path}: ${String(err)}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    };
    const call = async <T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> => {
      const r = await request<T>(method, path, body);
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
      return r.body;
    };
    const sizeNow = async (): Promise<SizeFigures> => {
      const s = await call<Size>("GET", "/size");
      const file = d1File(state);
      const p = file ? sqlitePages(file) : null;
      return {
        ...s,
        live_bytes: p ? (p.pages - p.freePages) * p.pageSize : null,
        file_bytes: diskBytes(join(state, "d1"), (n) => /\.sqlite(-wal|-shm)?$/.test(n)),
      };
    };

    const day0 = Date.UTC(2026, 0, 1);
    const spanMs = o.days * DAY;
    const planStart = performance.now();
    const batches = planBatches(o.records, o.accounts, spanMs, o.windowMin * 60_000, o.maxBatch);
    const sizes = batches.map((b) => b.records.length).sort((a, b) => a - b);
    const plan = {
      batches: batches.length,
      mean: o.records / batches.length,
      p50: sizes[Math.floor(sizes.length / 2)]!,
      full: sizes.filter((s) => s >= o.maxBatch).length,
      single: sizes.filter((s) => s === 1).length,
      ms: performance.now() - planStart,
    };
    log(
      `${o.records} records of ${o.accounts} accounts over ${o.days} days: ${plan.batches} batches (mean ${plan.mean.toFixed(1)} records, median ${plan.p50}; ${plan.full} full, ${plan.single} of one record)`,
    );
    const empty = await sizeNow();

    // Store every batch, `concurrency` at a time, in the order they close.
    const seeded: Sums = { requests: 0, prompt: 0, completion: 0, cached: 0, cache_write: 0, cost: 0 };
    const perAccount = new Map<string, { requests: number; cost: number }>();
    const counts = { deliveries: 0, duplicates: 0, crashes: 0, crashes_by_step: {} as Record<string, number>, retried: 0, parts: 0, json_bytes: 0 };
    const retryReasons = new Map<string, number>();
    let next = 0;
    let lastLog = Date.now();
    const storeStart = performance.now();
    const deliver = async (b: PlannedBatch, crash?: string) => {
      counts.deliveries++;
      return request<{ parts: number; bytes: number; sums: Sums; crashed?: string; error?: string }>("POST", "/store", {
        account: b.account,
        seq: b.seq,
        records: b.records,
        n: o.records,
        day0,
        spanMs,
        ...(crash ? { crash } : {}),
      });
    };
    const storer = async () => {
      while (next < batches.length) {
        deadline.check("storing batches");
        const k = next++;
        const b = batches[k]!;
        if (o.crashEvery > 0 && k % o.crashEvery === Math.floor(o.crashEvery / 2)) {
          const step = STEPS[Math.floor(k / o.crashEvery) % STEPS.length]!;
          const r = await deliver(b, step);
          if (r.status !== 500 || !r.body.crashed)
            throw new Error(`batch ${k}: a crash after ${step} was expected, got ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
          counts.crashes++;
          counts.crashes_by_step[step] = (counts.crashes_by_step[step] ?? 0) + 1;
        }
        let stored: { parts: number; bytes: number; sums: Sums } | undefined;
        for (let attempt = 1; !stored; attempt++) {
          const r = await deliver(b);
          if (r.ok) stored = r.body;
          else {
            const reason = String(r.body.error ?? r.status)
              .replace(/batch \S+/, "batch …")
              .slice(0, 120);
            retryReasons.set(reason, (retryReasons.get(reason) ?? 0) + 1);
            if (attempt >= 5) throw new Error(`batch ${k}: ${attempt} deliveries failed, the last: ${reason}`);
            counts.retried++;
            await new Promise((res) => setTimeout(res, 50 * attempt));
          }
        }
        if (o.duplicateEvery > 0 && k % o.duplicateEvery === 0) {
          const again = await deliver(b);
          if (!again.ok) throw new Error(`batch ${k}: its second delivery failed: ${JSON.stringify(again.body).slice(0, 300)}`);
          counts.duplicates++;
        }
        for (const key of Object.keys(seeded) as Array<keyof Sums>) seeded[key] += stored.sums[key];
        const account = `acct_load${String(b.account).padStart(7, "0")}`;
        const acc = perAccount.get(account) ?? { requests: 0, cost: 0 };
        acc.requests += stored.sums.requests;
        acc.cost += stored.sums.cost;
        perAccount.set(account, acc);
        counts.parts += stored.parts;
        counts.json_bytes += stored.bytes;
        if (Date.now() - lastLog > 15_000) {
          lastLog = Date.now();
          log(`  ${k + 1} of ${batches.length} batches, ${seeded.requests} records stored`);
        }
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, storer));
    const storeMs = performance.now() - storeStart;
    log(`stored in ${(storeMs / 1000).toFixed(1)} s: ${Math.round(seeded.requests / (storeMs / 1000))} records/s`);
    const stored = await sizeNow();

    // The checks.
    const failures: string[] = [];
    const expect = (ok: boolean, what: string) => {
      if (!ok) failures.push(what);
    };
    expect(seeded.requests === o.records, `stored ${seeded.requests} of ${o.records} records`);
    const index = await call<{ objects: number; records: number; bytes: number; cost_nano: number; writing: number }>("GET", "/index");
    const listed = await call<{ objects: number; bytes: number }>("GET", "/list");
    expect(index.records === o.records, `the index holds ${index.records} records, ${o.records} were stored`);
    expect(index.cost_nano === seeded.cost, `the index's Σ cost ${index.cost_nano} is not the seeded ${seeded.cost}`);
    expect(index.writing === 0, `${index.writing} parts left writing`);
    expect(index.objects === counts.parts, `the index holds ${index.objects} parts, the batches made ${counts.parts}`);
    expect(
      listed.objects === index.objects && listed.bytes === index.bytes,
      `the bucket lists ${listed.objects} objects (${listed.bytes} bytes), the index ${index.objects} (${index.bytes})`,
    );
    log(`reading back every object (${index.objects})`);
    const verifyStart = performance.now();
    const seen = new Uint8Array(o.records);
    const verified = { objects: 0, records: 0, bytes: 0, raw_bytes: 0, cost_nano: 0, errors: [] as string[], twice: 0, unknown: 0 };
    for (let offset = 0; ; offset += 200) {
      deadline.check("reading the objects back");
      const v = await call<Omit<typeof verified, "twice" | "unknown"> & { seen: number[] }>("POST", "/verify", { offset, limit: 200 });
      verified.objects += v.objects;
      verified.records += v.records;
      verified.bytes += v.bytes;
      verified.raw_bytes += v.raw_bytes;
      verified.cost_nano += v.cost_nano;
      verified.errors.push(...v.errors.slice(0, Math.max(0, 20 - verified.errors.length)));
      for (const i of v.seen) {
        if (!(i >= 0 && i < o.records)) verified.unknown++;
        else if (seen[i] !== 0) verified.twice++;
        else seen[i] = 1;
      }
      if (v.objects < 200) break;
    }
    const verifyMs = performance.now() - verifyStart;
    const missing = seen.reduce((m, s) => m + (s === 0 ? 1 : 0), 0);
    expect(verified.errors.length === 0, `objects that do not match their index rows: ${verified.errors.join("; ")}`);
    expect(verified.objects === index.objects, `read back ${verified.objects} objects, the index has ${index.objects}`);
    expect(
      verified.records === o.records && missing === 0 && verified.twice === 0 && verified.unknown === 0,
      `read back ${verified.records} records: ${missing} missing, ${verified.twice} twice, ${verified.unknown} unknown`,
    );
    expect(verified.cost_nano === seeded.cost, `the objects' Σ cost ${verified.cost_nano} is not the seeded ${seeded.cost}`);
    const rollups = await call<{ total: Sums & { rows: number }; accounts: Array<{ account_id: string; requests: number; cost: number }> }>("GET", "/rollups");
    for (const key of Object.keys(seeded) as Array<keyof Sums>)
      expect(rollups.total[key] === seeded[key], `Σ ${key} of the rollups is ${rollups.total[key]}, the seeded ${seeded[key]}`);
    let accountsOff = 0;
    for (const a of rollups.accounts) {
      const s = perAccount.get(a.account_id);
      if (!s || s.requests !== a.requests || s.cost !== a.cost) accountsOff++;
    }
    expect(
      rollups.accounts.length === perAccount.size && accountsOff === 0,
      `${accountsOff} accounts' rollups differ from their records (${rollups.accounts.length} accounts in the rollups, ${perAccount.size} seeded)`,
    );

    // D1's size: as left; the attempts pruned as the health fold does (older than a day and an hour); none; no rollups either.
    const lastAt = day0 + spanMs;
    const pruned = await call<{ deleted: number }>("POST", "/prune-attempts", { before: lastAt - 25 * 3_600_000 });
    const attemptsPruned = await sizeNow();
    await call("POST", "/prune-attempts", { before: Number.MAX_SAFE_INTEGER });
    const noAttempts = await sizeNow();
    const r2Disk = diskBytes(join(state, "r2"));

    const figures = {
      options: o,
      plan,
      store: {
        ms: storeMs,
        records_per_s: seeded.requests / (storeMs / 1000),
        batches_per_s: batches.length / (storeMs / 1000),
        parts_per_s: counts.parts / (storeMs / 1000),
        ...counts,
        retry_reasons: Object.fromEntries(retryReasons),
      },
      seeded,
      index,
      listed,
      verified: { ...verified, missing, ms: verifyMs },
      rollups: { rows: rollups.total.rows, accounts: rollups.accounts.length, accounts_off: accountsOff },
      sizes: { empty, stored, attempts_pruned: attemptsPruned, no_attempts: noAttempts, attempts_pruned_count: pruned.deleted },
      archive: {
        objects: index.objects,
        bytes: index.bytes,
        raw_bytes: verified.raw_bytes,
        compression: verified.raw_bytes / verified.bytes,
        bytes_per_record: index.bytes / index.records,
        r2_disk_bytes: r2Disk,
      },
      failures,
      ok: failures.length === 0,
    };
    if (o.json) writeFileSync(o.json, JSON.stringify(figures, null, 2) + "\n");
    console.log(report(figures));
    if (failures.length) console.error(`records-load: ${failures.length} check(s) failed:\n  ${failures.join("\n  ")}`);
    return failures.length ? 1 : 0;
  } finally {
    await stop();
  }
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const mb = (n: number | null) => (n === null ? "n/a" : `${(n / 1e6).toFixed(1)} MB`);

type Figures = {
  options: Options;
  plan: { batches: number; mean: number; p50: number; full: number; single: number };
  store: {
    ms: number;
    records_per_s: number;
    batches_per_s: number;
    parts_per_s: number;
    deliveries: number;
    duplicates: number;
    crashes: number;
    retried: number;
    parts: number;
    crashes_by_step: Record<string, number>;
  };
  verified: { objects: number; records: number; missing: number; twice: number; ms: number };
  rollups: { rows: number; accounts: number };
  sizes: Record<"empty" | "stored" | "attempts_pruned" | "no_attempts", SizeFigures>;
  archive: { objects: number; bytes: number; compression: number; bytes_per_record: number };
  failures: string[];
};

/** The run as a markdown table. */
function report(f: Figures): string {
  const s = f.sizes;
  const live = (z: SizeFigures) => (z.live_bytes === null || s.empty.live_bytes === null ? null : z.live_bytes - s.empty.live_bytes);
  const sizeRow = (label: string, z: SizeFigures) =>
    `| D1 ${label}: size_after · live pages (growth) · file | ${mb(z.size_after)} · ${mb(z.live_bytes)} (+${mb(live(z))}) · ${mb(z.file_bytes)}; rows: ${int(z.parts)} parts, ${int(z.rollups)} rollups, ${int(z.attempts)} attempts, ${int(z.generations)} records |`;
  const o = f.options;
  const rows = [
    `| records | ${int(o.records)} of ${int(o.accounts)} accounts (Zipf) over ${o.days} UTC days |`,
    `| batches (flush window ${o.windowMin} min, ≤ ${o.maxBatch} records) | ${int(f.plan.batches)}: mean ${f.plan.mean.toFixed(1)} records, median ${f.plan.p50}; ${int(f.plan.full)} full, ${int(f.plan.single)} of one record |`,
    `| deliveries | ${int(f.store.deliveries)}: ${int(f.store.duplicates)} batches twice, ${int(f.store.crashes)} crashed first (${Object.entries(
      f.store.crashes_by_step,
    )
      .map(([k, v]) => `${v} after ${k}`)
      .join(", ")}), ${int(f.store.retried)} failed and sent again |`,
    `| storing (${o.concurrency} at a time) | ${(f.store.ms / 1000).toFixed(1)} s: ${int(f.store.records_per_s)} records/s, ${f.store.batches_per_s.toFixed(1)} batches/s, ${f.store.parts_per_s.toFixed(1)} parts/s |`,
    `| parts (R2 objects) · bytes | ${int(f.archive.objects)} · ${mb(f.archive.bytes)}: ${int(f.archive.bytes_per_record)} B a record, gzip ${f.archive.compression.toFixed(1)} × |`,
    `| read back | ${int(f.verified.objects)} objects, ${int(f.verified.records)} records in ${(f.verified.ms / 1000).toFixed(1)} s: ${int(f.verified.missing)} missing, ${int(f.verified.twice)} twice |`,
    `| rollups | ${int(f.rollups.rows)} rows over ${int(f.rollups.accounts)} accounts; Σ requests, tokens and cost equal the seeded sums: ${f.failures.some((x) => x.includes("rollups")) ? "no" : "yes"} |`,
    sizeRow("empty (migrations)", s.empty),
    sizeRow("as stored", s.stored),
    sizeRow("attempts older than 25 h pruned", s.attempts_pruned),
    sizeRow("no attempts", s.no_attempts),
    `| checks | ${f.failures.length === 0 ? "all hold" : `${f.failures.length} failed`} |`,
  ];
  return ["| measure | value |", "|---|---|", ...rows].join("\n");
}

process.exitCode = await main().catch((err: unknown) => {
  console.error(`records-load: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return 1;
});
