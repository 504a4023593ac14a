// Scenario `ceiling` (`npm run bench -- --only ceiling`, a diagnostic outside the default set): the write
// ceiling of one D1 database for generation records (issue 27). A bench-only Worker
// (bench/ceiling-worker.js, bundled here with esbuild from the measured checkout's own
// src/db/generations.ts and src/generations/record.ts) runs in Miniflare with a local D1 persisted to a
// temporary directory, the checkout's migrations/ applied. This process plays the ledgers: for each
// layout (L ledgers, batches of at most B records: each Durable Object's alarm copies its outbox in
// batches of RECORDS_FLUSH_BATCH) and each offered rate (records/s over all ledgers, stepped up), every
// ledger's outbox fills at rate/L and its alarm flushes it as LedgerObject's does (bench/ceiling-model.ts):
// RECORDS_FLUSH_DELAY_MS after the first record into an empty outbox, at once while records are left.
// A flush is one POST /flush of n records: one flushGenerations call, one D1 batch. The rate steps up
// until a step achieves less than 90 % of what it offered; each layout gets a fresh database.
//
// Everything is on 127.0.0.1 and bounded in time: each step's warm-up and window, each flush (60 s), each
// layout (the ladder's length), and Miniflare is stopped by the bench's Cleanup also on errors and signals.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import type { MiniflareOptions } from "miniflare";
import { keepAliveAgent, send } from "./load.ts";
import { cpuSnapshot, foreignCpuPercent, startRuntime, type Cleanup, type Runtime } from "./processes.ts";
import { cpuMs } from "./scenarios.ts";
import {
  nextFlushAt,
  nextRate,
  outbox,
  stepFigures,
  takeBatch,
  arrivedBy,
  type Batch,
  type CeilingRun,
  type CeilingSet,
  type ConfigRun,
  type Fold,
  type RecordShape,
  type Step,
} from "./ceiling-model.ts";
import { applyMigrations, TOOL_WORKER_BUILD } from "../scripts/worker-bundle.ts";
import type { WranglerConfig } from "../scripts/wrangler-config.ts";
import { SETTINGS } from "../src/settings.ts";

export type CeilingOptions = {
  /** This checkout (the bench's own files) and the one measured (its src/ and migrations/). */
  root: string;
  workerRoot: string;
  outDir: string;
  cfg: WranglerConfig;
  repeat: number;
  ledgers: number[];
  batches: number[];
  rates: number[];
  /** Each step's warm-up (default: the alarm's delay + 0.5 s) and measured window. */
  warmupMs?: number;
  windowMs: number;
  /** The ledger's alarm delay (RECORDS_FLUSH_DELAY_MS); default: the setting's default. */
  flushDelayMs?: number;
  cleanup: Cleanup;
  /**
   * Runs one step (bench/run.ts's `quietly`: waits for a quiet second first, and measures again when other
   * processes took more than 10 % of the CPU meanwhile, keeping the quieter step); default: runs it once.
   */
  measure?: <T extends { foreign_cpu_pct: number }>(label: string, run: () => Promise<T>) => Promise<T>;
  log: (msg: string) => void;
  /** Set when the bench is being stopped: no further step starts. */
  stopping: () => boolean;
  /** Written after every run (an interrupted set keeps the runs it finished). */
  onRun?: (set: CeilingSet) => void;
  machine: CeilingSet["machine"];
  source: string;
  args: string[];
};

const FLUSH_TIMEOUT_MS = 60_000;
/** A ledger's flushes that may fail in a row (each is counted and sent again) before the step fails. */
const MAX_FAILURES = 3;
const D1 = "DB";

/** The bench Worker bundled against the measured checkout's src/: the entry's relative imports resolve there. */
async function bundleWorker(o: CeilingOptions): Promise<string> {
  const dir = join(o.outDir, "ceiling");
  await build({
    stdin: {
      contents: readFileSync(join(o.root, "bench", "ceiling-worker.js"), "utf8"),
      resolveDir: join(o.workerRoot, "bench"),
      sourcefile: "ceiling-worker.js",
    },
    ...TOOL_WORKER_BUILD,
    outfile: join(dir, "worker.js"),
  });
  return dir;
}

type Sample = { models: Array<{ id: string; carriers: Array<{ slug: string; name: string }> }> };

/** The catalog's text models and their carriers (slug and display name): what the synthetic records name. */
function catalogSample(workerRoot: string): Sample {
  const catalog = JSON.parse(readFileSync(join(workerRoot, "catalog.json"), "utf8")) as {
    providers: Array<{ slug: string; name: string }>;
    models: Array<{ id: string; output_modalities?: string[]; endpoints: Array<{ provider: string }> }>;
  };
  const names = new Map(catalog.providers.map((p) => [p.slug, p.name]));
  return {
    models: catalog.models
      .filter((m) => !m.output_modalities || m.output_modalities.includes("text"))
      .map((m) => ({ id: m.id, carriers: m.endpoints.map((e) => ({ slug: e.provider, name: names.get(e.provider) ?? e.provider })) })),
  };
}

async function getJson<T>(url: URL, path: string): Promise<T> {
  const res = await fetch(new URL(path, url), { signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

async function postJson<T>(url: URL, path: string, body: unknown = {}): Promise<T> {
  const res = await fetch(new URL(path, url), { method: "POST", body: JSON.stringify(body), signal: AbortSignal.timeout(FLUSH_TIMEOUT_MS) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

type Size = { bytes: number; generations: number; attempts: number };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** One step: every ledger's outbox filled at rate/ledgers, flushed by its alarm, for warm-up + window; then the flushes in flight end. */
async function runStep(
  runtime: Runtime,
  o: { ledgers: number; maxBatch: number; rate: number; warmupMs: number; windowMs: number; delayMs: number },
): Promise<Step> {
  const agent = keepAliveAgent(o.ledgers);
  const before = await getJson<Size>(runtime.url, "/size");
  const cpuBefore = cpuSnapshot();
  const workerdBefore = cpuMs(runtime.workerdPid);
  const t0 = performance.now();
  const w0 = t0 + o.warmupMs;
  const w1 = w0 + o.windowMs;
  // Ledgers out of phase: each one's records began a fraction of the delay earlier, so their alarms do not all fire together.
  const outboxes = Array.from({ length: o.ledgers }, (_, i) => outbox(o.rate / o.ledgers, t0 - (i / o.ledgers) * o.delayMs, o.delayMs, o.maxBatch));
  const batches: Batch[] = [];
  let workerdAtEnd = NaN;
  let cpuAtEnd = cpuBefore;
  const atEnd = sleep(w1 - performance.now()).then(() => {
    workerdAtEnd = cpuMs(runtime.workerdPid);
    cpuAtEnd = cpuSnapshot();
  });
  try {
    await Promise.all(
      outboxes.map(async (box, ledger) => {
        let afterFlush = false;
        let failures = 0;
        for (;;) {
          const at = nextFlushAt(box, performance.now(), afterFlush);
          if (at >= w1) return;
          await sleep(at - performance.now());
          const startMs = performance.now();
          const n = takeBatch(box, startMs);
          if (n === 0) {
            afterFlush = false;
            continue;
          }
          const sent = await send(
            agent,
            runtime.url,
            {
              method: "POST",
              path: "/flush",
              headers: { "content-type": "application/json" },
              body: Buffer.from(JSON.stringify({ ledger, n })),
            },
            { stream: false, keepBody: true, timeoutMs: FLUSH_TIMEOUT_MS },
          );
          const endMs = performance.now();
          let reply: { d1_ms?: number; rows_written?: number } = {};
          try {
            reply = JSON.parse(sent.body.toString()) as typeof reply;
          } catch {
            // a failed flush's body need not be JSON
          }
          batches.push({ ledger, startMs, endMs, n, ok: sent.ok, d1Ms: reply.d1_ms ?? NaN, rowsWritten: reply.rows_written ?? NaN });
          afterFlush = true;
          if (!sent.ok) {
            // As the ledger does: the batch stays in the outbox and the next alarm sends it again (flushes are idempotent).
            box.taken -= n;
            if (++failures >= MAX_FAILURES)
              throw new Error(
                `${failures} flushes in a row failed, the last of ${n} records: ${sent.error} ${sent.body.toString().slice(0, 300)}; workerd: ${runtime.log.recent.slice(-5).join(" | ")}`,
              );
            await sleep(100);
            continue;
          }
          failures = 0;
        }
      }),
    );
    await atEnd;
  } finally {
    agent.destroy();
  }
  const after = await getJson<Size>(runtime.url, "/size");
  const flushed = after.generations - before.generations;
  const figures = stepFigures(batches, {
    offered: o.rate,
    ledgers: o.ledgers,
    maxBatch: o.maxBatch,
    w0,
    w1,
    arrivedByEnd: outboxes.reduce((s, box) => s + arrivedBy(box, w1), 0),
    delayMs: o.delayMs,
  });
  return {
    ...figures,
    bytes_per_record: flushed > 0 ? (after.bytes - before.bytes) / flushed : NaN,
    foreign_cpu_pct: foreignCpuPercent(cpuBefore, cpuAtEnd, os.cpus().length),
    workerd_cpu_pct: ((workerdAtEnd - workerdBefore) / (cpuAtEnd.at - cpuBefore.at)) * 100,
  };
}

/** The bench Worker in Miniflare: its D1 persisted under `persistDir`, or in memory. */
function workerOptions(o: CeilingOptions, dir: string, sample: Sample, persistDir?: string): MiniflareOptions {
  return {
    name: "ceiling",
    modules: [{ type: "ESModule", path: join(dir, "worker.js") }],
    modulesRoot: dir,
    compatibilityDate: o.cfg.compatibilityDate,
    compatibilityFlags: o.cfg.compatibilityFlags,
    d1Databases: [D1],
    bindings: { SAMPLE: JSON.stringify(sample) },
    ...(persistDir ? { defaultPersistRoot: persistDir } : {}),
    port: 0,
  };
}

/** One layout on a fresh database: the rates stepped up until one is not kept up. */
async function runConfig(o: CeilingOptions, dir: string, sample: Sample, ledgers: number, maxBatch: number, delayMs: number): Promise<ConfigRun> {
  const state = mkdtempSync(join(os.tmpdir(), "switchyard-ceiling-"));
  const removeState = () => rmSync(state, { recursive: true, force: true });
  const forgetState = o.cleanup.add("ceiling state", async () => removeState(), removeState);
  const runtime = await startRuntime(`ceiling ${ledgers}×${maxBatch}`, workerOptions(o, dir, sample, state), o.cleanup);
  try {
    await applyMigrations(runtime.mf, o.workerRoot, D1);
    const start = await getJson<Size>(runtime.url, "/size");
    const steps: Step[] = [];
    for (let rate: number | undefined = o.rates[0]; rate !== undefined && !o.stopping();) {
      const offered = rate;
      const measure = o.measure ?? ((_label, run) => run());
      const step = await measure(`ceiling ${ledgers}×${maxBatch} at ${offered}/s`, () =>
        runStep(runtime, { ledgers, maxBatch, rate: offered, warmupMs: o.warmupMs ?? delayMs + 500, windowMs: o.windowMs, delayMs }),
      );
      steps.push(step);
      o.log(
        `  ${ledgers} ledgers × batches ≤ ${maxBatch}: offered ${rate}/s → achieved ${Math.round(step.achieved)}/s, batch mean ${Math.round(step.batch_mean)}, ` +
          `flush p50 ${step.latency_p50_ms.toFixed(1)} ms p99 ${step.latency_p99_ms.toFixed(1)} ms, workerd ${step.workerd_cpu_pct.toFixed(0)} % CPU, others ${step.foreign_cpu_pct.toFixed(0)} %` +
          `${step.failed_batches > 0 ? `, ${step.failed_batches} flushes failed and were sent again` : ""}${step.kept_up ? "" : " — not kept up"}`,
      );
      rate = nextRate(o.rates, step);
    }
    const end = await getJson<Size>(runtime.url, "/size");
    const fold = await postJson<Fold>(runtime.url, "/fold");
    o.log(`  health fold over ${fold.attempts} attempts: ${fold.statements.map((x) => `${x.d1_ms} ms of D1 and ${x.rows_read} rows read`).join(", then ")}`);
    return {
      ledgers,
      max_batch: maxBatch,
      steps,
      bytes_start: start.bytes,
      bytes_end: end.bytes,
      records_end: end.generations,
      attempts_end: end.attempts,
      fold: { attempts: fold.attempts, statements: fold.statements },
    };
  } finally {
    await runtime.stop();
    forgetState();
    removeState();
  }
}

/** Records the footprint flushes: 40 batches of 500, four ledgers' accounts. */
const FOOTPRINT_RECORDS = 20_000;
/**
 * Bench-only, on the footprint's second database: every carrier attempt row is deleted as it is written,
 * as if the Cron Trigger's prune (attempts older than a day) had already run, so the growth is what a
 * record keeps in D1 for the retention period (its `generations` row and index entries).
 */
const PRUNED_AT_ONCE =
  "CREATE TRIGGER bench_attempts_pruned AFTER INSERT ON endpoint_attempts BEGIN DELETE FROM endpoint_attempts WHERE generation_id = NEW.generation_id AND idx = NEW.idx; END";

/**
 * What the synthetic records are like (JSON bytes, attempts) and what they take in D1: two throwaway
 * instances (in-memory D1, the migrations applied), each sent FOOTPRINT_RECORDS records; D1's growth per
 * record as flushed (with the attempts' rows) and as kept once the attempts are pruned.
 */
async function recordFootprint(o: CeilingOptions, dir: string, sample: Sample): Promise<RecordShape> {
  const growth = async (pruned: boolean): Promise<number> => {
    const runtime = await startRuntime(`ceiling (footprint${pruned ? ", attempts pruned" : ""})`, workerOptions(o, dir, sample), o.cleanup);
    try {
      await applyMigrations(runtime.mf, o.workerRoot, D1);
      if (pruned) await (await runtime.mf.getD1Database(D1)).prepare(PRUNED_AT_ONCE).run();
      const before = await getJson<Size>(runtime.url, "/size");
      for (let i = 0; i < FOOTPRINT_RECORDS / 500; i++) {
        await postJson(runtime.url, "/flush", { ledger: i % 4, n: 500 });
      }
      const after = await getJson<Size>(runtime.url, "/size");
      if (after.generations - before.generations !== FOOTPRINT_RECORDS)
        throw new Error(`footprint: ${after.generations - before.generations} records in D1, not ${FOOTPRINT_RECORDS}`);
      return (after.bytes - before.bytes) / FOOTPRINT_RECORDS;
    } finally {
      await runtime.stop();
    }
  };
  const runtime = await startRuntime("ceiling (records)", workerOptions(o, dir, sample), o.cleanup);
  let info: { record_bytes_mean: number; record_bytes_p50: number; record_bytes_max: number; attempts_mean: number };
  try {
    info = await getJson<typeof info>(runtime.url, "/info");
  } finally {
    await runtime.stop();
  }
  return {
    bytes_mean: info.record_bytes_mean,
    bytes_p50: info.record_bytes_p50,
    bytes_max: info.record_bytes_max,
    attempts_mean: info.attempts_mean,
    d1_bytes_flushed: await growth(false),
    d1_bytes_kept: await growth(true).catch((err: unknown) => {
      o.log(`scenario ceiling: the footprint without attempts could not be measured: ${String(err)}`);
      return NaN;
    }),
  };
}

export async function ceilingScenario(o: CeilingOptions): Promise<CeilingSet> {
  const delayMs = o.flushDelayMs ?? SETTINGS.RECORDS_FLUSH_DELAY_MS.fallback;
  o.log("scenario ceiling: bundling the bench Worker (flushGenerations of the measured checkout)");
  const dir = await bundleWorker(o);
  const sample = catalogSample(o.workerRoot);
  const set: CeilingSet = {
    format: "switchyard-bench-ceiling/1",
    started_at: new Date().toISOString(),
    args: o.args,
    source: o.source,
    machine: o.machine,
    settings: {
      rates: o.rates,
      ledgers: o.ledgers,
      batches: o.batches,
      warmup_ms: o.warmupMs ?? delayMs + 500,
      window_ms: o.windowMs,
      flush_delay_ms: delayMs,
    },
    record: await recordFootprint(o, dir, sample),
    runs: [],
  };
  o.log(
    `scenario ceiling: records of ${Math.round(set.record.bytes_mean)} B of JSON on average, ${set.record.attempts_mean.toFixed(2)} carrier attempts; ` +
      `D1 grows ${Math.round(set.record.d1_bytes_flushed)} B a record as flushed, ${Math.round(set.record.d1_bytes_kept)} B once its attempts are pruned`,
  );
  for (let index = 1; index <= o.repeat && !o.stopping(); index++) {
    const started = performance.now();
    const cpuAtStart = cpuSnapshot();
    const run: CeilingRun = { index, started_at: new Date().toISOString(), configs: [], foreign_cpu_pct: NaN, wall_s: NaN };
    set.runs.push(run);
    for (const ledgers of o.ledgers)
      for (const maxBatch of o.batches) {
        if (o.stopping()) break;
        o.log(`scenario ceiling (run ${index} of ${o.repeat}): ${ledgers} ledgers, batches of at most ${maxBatch}, a fresh D1`);
        run.configs.push(await runConfig(o, dir, sample, ledgers, maxBatch, delayMs));
      }
    run.foreign_cpu_pct = foreignCpuPercent(cpuAtStart, cpuSnapshot(), os.cpus().length);
    run.wall_s = (performance.now() - started) / 1000;
    o.onRun?.(set);
  }
  return set;
}
