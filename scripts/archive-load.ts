// `npm run archive-load [-- --records N]`: the records archive (issue 27) at scale, locally. A script-only
// Worker (scripts/archive-load-worker.js: the tree's flushGenerations and archiveRecords) runs in Miniflare
// with D1 and R2 persisted to a temporary directory, the tree's migrations applied. It seeds N synthetic
// records (default 1,000,000; ≈ 900 bytes of JSON each, test/worker/synthetic-record.ts) over 40 UTC days
// and 50 accounts, in time order as they would arrive; archives with a retention of 30 days until done
// (50 parts a call); checks that D1 holds exactly the last 30 days, that the archive holds every other
// record once (its index, the bucket's listing, and every object read back and checked against its index
// row) and that Σ cost archived + in D1 = Σ seeded; times lookups of archived records; then moves the clock
// 30 days on so the rest follows, and checks again. D1's size is measured at each stage three ways: D1's
// own `size_after`, SQLite's pages in use ((page_count − freelist_count) × page_size, read from the
// database file and its write-ahead log: D1 refuses those PRAGMAs) and the files on disk (SQLite does not
// give pages back to the file without VACUUM or auto-vacuum: it reuses them for later writes).
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
import { SETTINGS } from "../src/settings.ts";

const DAY = 86_400_000;
const root = resolve(import.meta.dirname, "..");

const USAGE = `usage: npm run archive-load -- [--records N] [--accounts N] [--days N] [--retention-days N] [--parts-per-call N]
       [--concurrency N] [--seed-batch N] [--samples N] [--time-limit-s S] [--json FILE] [--keep]
  --records N         synthetic records to seed (default 1000000)
  --accounts N        accounts they are spread over (default 50)
  --days N            UTC days they are spread over (default 40)
  --retention-days N  RECORDS_RETENTION_DAYS of the archive runs (default 30)
  --parts-per-call N  parts one archiveRecords call writes at most (default 50)
  --concurrency N     account-days an archiveRecords call works on at once (default 4, as RECORDS_ARCHIVE_CONCURRENCY)
  --seed-batch N      records per flushGenerations call while seeding (default 2000)
  --samples N         archived ids looked up for the read latency (default 200)
  --time-limit-s S    the whole run's bound (default 300 + 3 ms a record)
  --json FILE         also write every figure as JSON
  --keep              keep the temporary directory (D1 and R2 as left)`;

type Options = {
  records: number;
  accounts: number;
  days: number;
  retentionDays: number;
  partsPerCall: number;
  concurrency: number;
  seedBatch: number;
  samples: number;
  timeLimitMs: number;
  json?: string;
  keep: boolean;
};

function usage(message: string): never {
  console.error(`archive-load: ${message}\n${USAGE}`);
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
        "retention-days": { type: "string" },
        "parts-per-call": { type: "string" },
        concurrency: { type: "string" },
        "seed-batch": { type: "string" },
        samples: { type: "string" },
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
  const days = whole("days", 40, 2, 3650);
  const retentionDays = whole("retention-days", 30, 1, 3650);
  if (retentionDays >= days) usage("--retention-days must be fewer than --days: otherwise nothing is archived");
  return {
    records,
    accounts: whole("accounts", 50, 1, 100_000),
    days,
    retentionDays,
    partsPerCall: whole("parts-per-call", 50, 1, 1000),
    concurrency: whole("concurrency", 4, 1, 16),
    seedBatch: whole("seed-batch", 2000, 1, 20_000),
    samples: whole("samples", 200, 1, 100_000),
    timeLimitMs: whole("time-limit-s", Math.ceil(300 + records * 0.003), 10, 86_400) * 1000,
    json: parsed.json,
    keep: parsed.keep ?? false,
  };
}

type Size = {
  size_after: number | null;
  page_size: number | string | null;
  page_count: number | string | null;
  freelist_count: number | string | null;
  generations: number;
  attempts: number;
  parts: number;
  rollups: number;
};
type D1Figures = { records: number; cost_nano: number; oldest: number | null; newest: number | null; before_cutoff: number };
type IndexFigures = { objects: number; records: number; bytes: number; cost_nano: number; writing: number };
type Verified = { objects: number; records: number; bytes: number; raw_bytes: number; cost_nano: number; errors: string[]; previous: unknown };
type ArchiveRun = { parts: number; records: number; notCommitted: number; done: boolean };
type Seeded = { records: number; cost_nano: number; json_bytes: number; before_cutoffs: Array<{ records: number; cost_nano: number }> };

/** D1's size three ways: as D1 reports it, SQLite's pages in use, the database's files on disk. */
type SizeFigures = {
  d1_size_after: number | null;
  live_bytes: number | null;
  free_bytes: number | null;
  auto_vacuum: boolean | null;
  file_bytes: number;
  generations: number;
  attempts: number;
};

class Deadline {
  constructor(readonly at: number) {}
  left(): number {
    return this.at - Date.now();
  }
  check(what: string): void {
    if (Date.now() > this.at) throw new Error(`time limit reached while ${what}`);
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function bundle(dir: string): Promise<string> {
  const outfile = join(dir, "worker.js");
  await build({
    entryPoints: [join(root, "scripts", "archive-load-worker.js")],
    ...TOOL_WORKER_BUILD,
    outfile,
  });
  return outfile;
}

async function main(): Promise<number> {
  const o = options(process.argv.slice(2));
  const deadline = new Deadline(Date.now() + o.timeLimitMs);
  const dir = mkdtempSync(join(tmpdir(), "switchyard-archive-load-"));
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
    console.error(`archive-load: ${signal}, stopping`);
    void stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const log = (msg: string) => console.error(`[archive-load ${((o.timeLimitMs - deadline.left()) / 1000).toFixed(1)} s] ${msg}`);

  try {
    const cfg = readWranglerConfig(join(root, "wrangler.toml"));
    const entry = await bundle(join(dir, "bundle"));
    mf = new Miniflare({
      name: "archive-load",
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
    let retried = 0;

    /**
     * One request to the Worker. Every call is safe to repeat (seeding upserts records by their fixed ids,
     * archiving is idempotent, the rest reads), so a connection lost before an answer is retried, at most 3 times.
     */
    const call = async <T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        let res: Response;
        try {
          res = await fetch(new URL(path, url), {
            method,
            headers: body === undefined ? {} : { "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(Math.max(1000, Math.min(300_000, deadline.left()))),
          });
        } catch (err) {
          const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
          if (attempt >= 3 || !(err instanceof TypeError)) throw new Error(`${method} ${path}: ${String(err)}${cause}`);
          log(`${method} ${path}: ${String(err)}${cause}; again`);
          retried++;
          await new Promise((r) => setTimeout(r, 500));
          continue;
        }
        const text = await res.text();
        if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
        return JSON.parse(text) as T;
      }
    };
    const sizeNow = async (): Promise<SizeFigures> => {
      const s = await call<Size>("GET", "/size");
      const file = d1File(state);
      const p = file ? sqlitePages(file) : null;
      return {
        d1_size_after: s.size_after,
        live_bytes: p ? (p.pages - p.freePages) * p.pageSize : null,
        free_bytes: p ? p.freePages * p.pageSize : null,
        auto_vacuum: p?.autoVacuum ?? null,
        file_bytes: diskBytes(join(state, "d1"), (n) => /\.sqlite(-wal|-shm)?$/.test(n)),
        generations: s.generations,
        attempts: s.attempts,
      };
    };

    // The plan: N records over `days` UTC days from day0, the clock at noon of the day after; then 30 days on.
    const day0 = Date.UTC(2025, 0, 1);
    const spanMs = o.days * DAY;
    const now1 = day0 + spanMs + 12 * 3_600_000;
    const cutoffOf = (now: number) => Math.floor(now / DAY) * DAY - o.retentionDays * DAY; // retentionCutoff (src/generations/archive-records.ts)
    const cutoff1 = cutoffOf(now1);
    const now2 = now1 + o.retentionDays * DAY;
    const cutoff2 = cutoffOf(now2);
    const partRecords = SETTINGS.RECORDS_ARCHIVE_PART_RECORDS.fallback;

    const empty = await sizeNow();
    const pragmaProbe = await call<Size>("GET", "/size");

    // Seed, in time order, two calls in flight.
    log(`seeding ${o.records} records over ${o.days} days and ${o.accounts} accounts`);
    const seeded = { records: 0, cost_nano: 0, json_bytes: 0, old1: { records: 0, cost_nano: 0 }, old2: { records: 0, cost_nano: 0 } };
    const seedStart = performance.now();
    let next = 0;
    let lastLog = Date.now();
    const seeder = async () => {
      while (next < o.records) {
        deadline.check("seeding");
        const from = next;
        const count = Math.min(o.seedBatch, o.records - from);
        next += count;
        const r = await call<Seeded>("POST", "/seed", { from, count, n: o.records, accounts: o.accounts, day0, spanMs, cutoffs: [cutoff1, cutoff2] });
        seeded.records += r.records;
        seeded.cost_nano += r.cost_nano;
        seeded.json_bytes += r.json_bytes;
        seeded.old1.records += r.before_cutoffs[0]!.records;
        seeded.old1.cost_nano += r.before_cutoffs[0]!.cost_nano;
        seeded.old2.records += r.before_cutoffs[1]!.records;
        seeded.old2.cost_nano += r.before_cutoffs[1]!.cost_nano;
        if (Date.now() - lastLog > 10_000) {
          lastLog = Date.now();
          log(`  ${seeded.records} seeded`);
        }
      }
    };
    await Promise.all([seeder(), seeder()]);
    const seedMs = performance.now() - seedStart;
    const afterSeed = await sizeNow();
    log(`seeded in ${(seedMs / 1000).toFixed(1)} s; D1 ${afterSeed.d1_size_after} bytes`);

    // As deployed, the Cron Trigger's health fold keeps endpoint attempts for a day and an hour: prune them so.
    const pruned = await call<{ deleted: number }>("POST", "/prune-attempts", { before: now1 - 25 * 3_600_000 });
    const afterPrune = await sizeNow();
    log(`pruned ${pruned.deleted} endpoint attempts older than a day and an hour; D1 ${afterPrune.d1_size_after} bytes`);

    const failures: string[] = [];
    const expect = (ok: boolean, what: string) => {
      if (!ok) failures.push(what);
    };
    expect(seeded.records === o.records, `seeded ${seeded.records} of ${o.records} records`);
    expect(afterSeed.generations === o.records, `D1 holds ${afterSeed.generations} records after seeding, not ${o.records}`);

    /** archiveRecords calls (partsPerCall parts each) until one says done. */
    const archiveUntilDone = async (now: number, phase: string) => {
      const t0 = performance.now();
      const total = { calls: 0, parts: 0, records: 0, not_committed: 0, ms: 0 };
      for (;;) {
        deadline.check(`archiving (${phase})`);
        const run = await call<ArchiveRun>("POST", "/archive", {
          now,
          retentionDays: o.retentionDays,
          partRecords,
          partsPerRun: o.partsPerCall,
          runMs: 600_000,
          concurrency: o.concurrency,
        });
        total.calls++;
        total.parts += run.parts;
        total.records += run.records;
        total.not_committed += run.notCommitted;
        if (Date.now() - lastLog > 10_000) {
          lastLog = Date.now();
          log(`  ${phase}: ${total.records} records in ${total.parts} parts`);
        }
        if (run.done) break;
      }
      total.ms = performance.now() - t0;
      return total;
    };

    /** Every archived object read back and checked against its index row, 100 a call. */
    const verifyAll = async () => {
      const out = { objects: 0, records: 0, bytes: 0, raw_bytes: 0, cost_nano: 0, errors: [] as string[] };
      let previous: unknown = null;
      for (let offset = 0; ; offset += 100) {
        deadline.check("verifying the archive");
        const v = await call<Verified>("POST", "/verify", { offset, limit: 100, previous });
        out.objects += v.objects;
        out.records += v.records;
        out.bytes += v.bytes;
        out.raw_bytes += v.raw_bytes;
        out.cost_nano += v.cost_nano;
        out.errors.push(...v.errors.slice(0, Math.max(0, 20 - out.errors.length)));
        previous = v.previous;
        if (v.objects < 100) break;
      }
      return out;
    };

    /** The archive and D1 after a phase: D1 holds exactly what is at or after the cutoff; the archive the rest, once. */
    const checkPhase = async (phase: string, cutoff: number, old: { records: number; cost_nano: number }) => {
      const d1 = await call<D1Figures>("GET", `/d1?cutoff=${cutoff}`);
      const index = await call<IndexFigures>("GET", "/index");
      const listed = await call<{ objects: number; bytes: number }>("GET", "/list");
      log(`${phase}: reading back every archived object`);
      const verifyStart = performance.now();
      const verified = await verifyAll();
      const verifyMs = performance.now() - verifyStart;
      const kept = seeded.records - old.records;
      expect(d1.before_cutoff === 0, `${phase}: D1 still holds ${d1.before_cutoff} records older than the cutoff`);
      expect(d1.records === kept, `${phase}: D1 holds ${d1.records} records, the last ${o.retentionDays} days had ${kept}`);
      expect(d1.records === 0 || (d1.oldest ?? 0) >= cutoff, `${phase}: D1's oldest record is before the cutoff`);
      expect(
        d1.cost_nano === seeded.cost_nano - old.cost_nano,
        `${phase}: D1's cost ${d1.cost_nano} is not the kept records' ${seeded.cost_nano - old.cost_nano}`,
      );
      expect(index.records === old.records, `${phase}: the index says ${index.records} records archived, ${old.records} were older than the cutoff`);
      expect(
        index.cost_nano + d1.cost_nano === seeded.cost_nano,
        `${phase}: Σ cost archived + in D1 = ${index.cost_nano + d1.cost_nano}, seeded ${seeded.cost_nano}`,
      );
      expect(index.writing === 0, `${phase}: ${index.writing} parts left writing`);
      expect(
        listed.objects === index.objects && listed.bytes === index.bytes,
        `${phase}: the bucket lists ${listed.objects} objects (${listed.bytes} bytes), the index ${index.objects} (${index.bytes})`,
      );
      expect(verified.errors.length === 0, `${phase}: objects that do not match their index rows: ${verified.errors.join("; ")}`);
      expect(
        verified.objects === index.objects && verified.records === old.records,
        `${phase}: read back ${verified.records} records in ${verified.objects} objects`,
      );
      expect(verified.cost_nano === index.cost_nano, `${phase}: the objects' cost ${verified.cost_nano} is not the index's ${index.cost_nano}`);
      return { d1, index, listed, verified, verify_ms: verifyMs };
    };

    // Phase 1: the retention.
    log(`archiving with a retention of ${o.retentionDays} days (clock ${new Date(now1).toISOString()})`);
    const phase1 = await archiveUntilDone(now1, "retention");
    const size1 = await sizeNow();
    const check1 = await checkPhase("retention", cutoff1, seeded.old1);
    expect(phase1.records === seeded.old1.records, `retention: the runs archived ${phase1.records} records, ${seeded.old1.records} were due`);

    // Reading archived records back: a lookup as a reader does it (the index, then R2), and the R2 read alone.
    log(`timing ${o.samples} lookups of archived records`);
    const samples = await call<Array<{ id: string; account: string; key: string }>>("GET", `/sample?n=${o.samples}`);
    const lookupMs: number[] = [];
    const objectMs: number[] = [];
    let notFound = 0;
    for (const s of samples) {
      deadline.check("timing lookups");
      for (const [path, into] of [
        [`/read?account=${encodeURIComponent(s.account)}&id=${s.id}`, lookupMs],
        [`/read-object?key=${encodeURIComponent(s.key)}&id=${s.id}`, objectMs],
      ] as const) {
        const t = performance.now();
        const res = await fetch(new URL(path, url), { signal: AbortSignal.timeout(30_000) });
        const found = res.ok ? ((await res.json()) as { id: string } | null) : (await res.arrayBuffer(), null);
        into.push(performance.now() - t);
        if (found?.id !== s.id) notFound++;
      }
    }
    lookupMs.sort((a, b) => a - b);
    objectMs.sort((a, b) => a - b);
    expect(samples.length === o.samples, `${samples.length} archived ids to look up, not ${o.samples}`);
    expect(notFound === 0, `${notFound} lookups of archived ids found nothing`);

    // Phase 2: thirty days later the rest follows.
    log(`archiving the rest (clock ${new Date(now2).toISOString()})`);
    const phase2 = await archiveUntilDone(now2, "the rest");
    const size2 = await sizeNow();
    const check2 = await checkPhase("the rest", cutoff2, seeded.old2);
    expect(seeded.old2.records === seeded.records, `the rest: ${seeded.old2.records} of ${seeded.records} records were due`);

    // SQLite keeps freed pages in the file; VACUUM gives them back, where it is allowed.
    const vacuum = await call<{ vacuumed: boolean; error?: string }>("POST", "/vacuum");
    const size3 = await sizeNow();
    const r2Disk = diskBytes(join(state, "r2"));

    const figures = {
      options: { ...o, part_records: partRecords, day0: new Date(day0).toISOString() },
      pragmas: { page_size: pragmaProbe.page_size, page_count: pragmaProbe.page_count, freelist_count: pragmaProbe.freelist_count },
      seed: {
        records: seeded.records,
        ms: seedMs,
        records_per_s: seeded.records / (seedMs / 1000),
        json_bytes_mean: seeded.json_bytes / seeded.records,
        cost_nano: seeded.cost_nano,
      },
      sizes: { empty, seeded: afterSeed, attempts_pruned: afterPrune, after_retention: size1, after_rest: size2, after_vacuum: size3 },
      attempts_pruned: pruned.deleted,
      retention: { ...phase1, records_per_s: phase1.records / (phase1.ms / 1000), parts_per_s: phase1.parts / (phase1.ms / 1000), check: check1 },
      rest: { ...phase2, records_per_s: phase2.records / (phase2.ms / 1000), parts_per_s: phase2.parts / (phase2.ms / 1000), check: check2 },
      archive: {
        objects: check2.index.objects,
        bytes: check2.index.bytes,
        raw_bytes: check2.verified.raw_bytes,
        compression: check2.verified.raw_bytes / check2.verified.bytes,
        bytes_per_record: check2.index.bytes / check2.index.records,
        r2_disk_bytes: r2Disk,
      },
      read: {
        samples: samples.length,
        lookup_p50_ms: percentile(lookupMs, 50),
        lookup_p99_ms: percentile(lookupMs, 99),
        object_p50_ms: percentile(objectMs, 50),
        object_p99_ms: percentile(objectMs, 99),
        not_found: notFound,
      },
      vacuum,
      retried_calls: retried,
      failures,
      ok: failures.length === 0,
    };
    if (o.json) writeFileSync(o.json, JSON.stringify(figures, null, 2) + "\n");
    console.log(report(figures));
    if (failures.length) console.error(`archive-load: ${failures.length} check(s) failed:\n  ${failures.join("\n  ")}`);
    return failures.length ? 1 : 0;
  } finally {
    await stop();
  }
}

type Figures = {
  options: Options & { part_records: number };
  seed: { records: number; ms: number; records_per_s: number; json_bytes_mean: number };
  sizes: Record<"empty" | "seeded" | "attempts_pruned" | "after_retention" | "after_rest" | "after_vacuum", SizeFigures>;
  attempts_pruned: number;
  retention: { parts: number; records: number; calls: number; ms: number; records_per_s: number; parts_per_s: number };
  rest: { parts: number; records: number; calls: number; ms: number; records_per_s: number; parts_per_s: number };
  archive: { objects: number; bytes: number; raw_bytes: number; compression: number; bytes_per_record: number; r2_disk_bytes: number };
  read: { samples: number; lookup_p50_ms: number; lookup_p99_ms: number; object_p50_ms: number; object_p99_ms: number };
  vacuum: { vacuumed: boolean; error?: string };
  failures: string[];
};

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const mb = (n: number | null) => (n === null ? "n/a" : `${(n / 1e6).toFixed(1)} MB`);
const perRecord = (bytes: number | null, records: number) => (bytes === null || records === 0 ? "n/a" : `${int(bytes / records)} B`);

/** The run as a markdown table. */
function report(f: Figures): string {
  const s = f.sizes;
  const grown = (to: SizeFigures, key: "d1_size_after" | "live_bytes" | "file_bytes") =>
    to[key] === null || s.empty[key] === null ? null : to[key]! - s.empty[key]!;
  const sizeRow = (label: string, z: SizeFigures) =>
    `| D1 ${label}: records · size_after · live pages · free pages · file | ${int(z.generations)} · ${mb(z.d1_size_after)} · ${mb(z.live_bytes)} · ${mb(z.free_bytes)} · ${mb(z.file_bytes)} |`;
  const rows = [
    `| seeded | ${int(f.seed.records)} records (${f.options.accounts} accounts × ${f.options.days} days, ≈ ${int(f.seed.json_bytes_mean)} B of JSON each) |`,
    `| seeding rate | ${int(f.seed.records_per_s)} records/s (${(f.seed.ms / 1000).toFixed(1)} s; ${f.options.seedBatch} a flushGenerations call, 2 in flight) |`,
    sizeRow("empty", s.empty),
    sizeRow("seeded", s.seeded),
    `| D1 bytes per record, with its endpoint attempt (live pages; size_after) | ${perRecord(grown(s.seeded, "live_bytes"), f.seed.records)}; ${perRecord(grown(s.seeded, "d1_size_after"), f.seed.records)} |`,
    sizeRow(`attempts older than 25 h pruned (${int(f.attempts_pruned)}, as the health fold does)`, s.attempts_pruned),
    `| D1 bytes per record, attempts pruned (live pages) | ${perRecord(grown(s.attempts_pruned, "live_bytes"), f.seed.records)} (a day and an hour of attempts left: ${int(s.attempts_pruned.attempts)} rows) |`,
    `| archive, retention ${f.options.retentionDays} days | ${int(f.retention.records)} records in ${int(f.retention.parts)} parts, ${(f.retention.ms / 1000).toFixed(1)} s: ${int(f.retention.records_per_s)} records/s, ${f.retention.parts_per_s.toFixed(1)} parts/s (${f.options.partsPerCall} parts a call) |`,
    sizeRow(`after the retention run`, s.after_retention),
    `| archive, the rest (clock + ${f.options.retentionDays} days) | ${int(f.rest.records)} records in ${int(f.rest.parts)} parts, ${(f.rest.ms / 1000).toFixed(1)} s: ${int(f.rest.records_per_s)} records/s, ${f.rest.parts_per_s.toFixed(1)} parts/s |`,
    sizeRow("after the rest", s.after_rest),
    sizeRow(f.vacuum.vacuumed ? "after VACUUM" : "VACUUM refused", s.after_vacuum),
    `| archive objects · bytes · records | ${int(f.archive.objects)} · ${mb(f.archive.bytes)} · ${int(f.rest.records + f.retention.records)} (≤ ${int(f.options.part_records)} a part) |`,
    `| compression (NDJSON ÷ gzip) | ${f.archive.compression.toFixed(2)} × (${mb(f.archive.raw_bytes)} → ${mb(f.archive.bytes)}) |`,
    `| R2 bytes per record | ${perRecord(f.archive.bytes, f.rest.records + f.retention.records)} (R2 on local disk, with its metadata: ${mb(f.archive.r2_disk_bytes)}) |`,
    `| read one archived record: index + R2 get + gunzip + find (p50 · p99) | ${f.read.lookup_p50_ms.toFixed(2)} ms · ${f.read.lookup_p99_ms.toFixed(2)} ms (${f.read.samples} random ids, one HTTP round trip each) |`,
    `| of which R2 get + gunzip + find (p50 · p99) | ${f.read.object_p50_ms.toFixed(2)} ms · ${f.read.object_p99_ms.toFixed(2)} ms |`,
    `| checks | ${f.failures.length === 0 ? "all hold" : `${f.failures.length} failed`} |`,
  ];
  return ["| measure | value |", "|---|---|", ...rows].join("\n");
}

process.exitCode = await main().catch((err: unknown) => {
  console.error(`archive-load: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return 1;
});
