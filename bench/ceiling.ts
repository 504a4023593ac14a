// Scenario `ceiling` (`npm run bench -- --only ceiling`, a diagnostic outside the default set): the
// ceilings of the records store's consumer (issue 36). A bench-only Worker (bench/ceiling-worker.js,
// bundled here with esbuild from the measured checkout's own src/generations/store-batches.ts) runs in
// Miniflare with a local D1 (the checkout's migrations/ applied) and R2, both persisted to a temporary
// directory. This process plays the records queue: for each layout (B records a batch, C consumers) and
// each offered rate (records/s, stepped up), a batch of B records of one account (accounts drawn by a
// Zipf law) is ready every B/rate seconds, and C consumers each take the oldest ready batch and store it
// (one POST /store: one `storeBatch` call, the ledger's acknowledgement a no-op), then the next. The rate
// steps up until a step achieves less than 90 % of what it offered; each layout gets a fresh D1 and R2.
// (Until issue 36 this scenario measured one D1's write ceiling for records, `flushGenerations`: its
// method and figures stay in bench/history/2026-11-25-to-26.md, "Issue 27".)
//
// Everything is on 127.0.0.1 and bounded in time: each step's warm-up and window, each store (60 s), each
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
  accountOf,
  ladder,
  nextRate,
  readyAt,
  readyBy,
  stepFigures,
  zipfTable,
  type CeilingRun,
  type CeilingSet,
  type ConfigRun,
  type D1Rows,
  type OutboxRows,
  type Step,
  type Stored,
} from "./ceiling-model.ts";
import { applyMigrations, TOOL_WORKER_BUILD } from "../scripts/worker-bundle.ts";
import type { WranglerConfig } from "../scripts/wrangler-config.ts";

export type CeilingOptions = {
  /** This checkout (the bench's own files) and the one measured (its src/ and migrations/). */
  root: string;
  workerRoot: string;
  outDir: string;
  cfg: WranglerConfig;
  repeat: number;
  batches: number[];
  consumers: number[];
  rates: number[];
  accounts: number;
  warmupMs: number;
  windowMs: number;
  cleanup: Cleanup;
  /** Runs one step (bench/run.ts's `quietly`); default: runs it once. */
  measure?: <T extends { foreign_cpu_pct: number }>(label: string, run: () => Promise<T>) => Promise<T>;
  log: (msg: string) => void;
  stopping: () => boolean;
  /** Written after every run (an interrupted set keeps the runs it finished). */
  onRun?: (set: CeilingSet) => void;
  machine: CeilingSet["machine"];
  source: string;
  args: string[];
};

const STORE_TIMEOUT_MS = 60_000;
/** Stores of one consumer that may fail in a row (each is counted and sent again) before the step fails. */
const MAX_FAILURES = 3;

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
      .filter((m) => (!m.output_modalities || m.output_modalities.includes("text")) && m.endpoints.length > 0)
      .map((m) => ({ id: m.id, carriers: m.endpoints.map((e) => ({ slug: e.provider, name: names.get(e.provider) ?? e.provider })) })),
  };
}

async function getJson<T>(url: URL, path: string): Promise<T> {
  const res = await fetch(new URL(path, url), { signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

type Size = { bytes: number; parts: number; rollups: number; attempts: number };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** One step: batches ready at rate/batch a second over warm-up + window, stored by `consumers` loops; then the stores in flight end. */
async function runStep(
  runtime: Runtime,
  o: { batch: number; consumers: number; rate: number; warmupMs: number; windowMs: number; zipf: number[]; next: { k: number } },
): Promise<Step> {
  const agent = keepAliveAgent(o.consumers);
  const cpuBefore = cpuSnapshot();
  const workerdBefore = cpuMs(runtime.workerdPid);
  const t0 = performance.now();
  const w0 = t0 + o.warmupMs;
  const w1 = w0 + o.windowMs;
  const stored: Stored[] = [];
  let taken = 0;
  let workerdAtEnd = NaN;
  let cpuAtEnd = cpuBefore;
  const atEnd = sleep(w1 - performance.now()).then(() => {
    workerdAtEnd = cpuMs(runtime.workerdPid);
    cpuAtEnd = cpuSnapshot();
  });
  try {
    await Promise.all(
      Array.from({ length: o.consumers }, async (_, consumer) => {
        let failures = 0;
        for (;;) {
          const now = performance.now();
          if (now >= w1) return;
          if (readyBy(o.rate, o.batch, t0, now) <= taken) {
            await sleep(Math.min(w1, readyAt(o.rate, o.batch, t0, taken)) - now);
            continue;
          }
          taken++;
          // The account of the batch: the k-th over the layout's whole run (each step goes on where the last stopped).
          const account = accountOf(o.next.k++, o.zipf);
          const startMs = performance.now();
          const sent = await send(
            agent,
            runtime.url,
            {
              method: "POST",
              path: "/store",
              headers: { "content-type": "application/json" },
              body: Buffer.from(JSON.stringify({ account, n: o.batch })),
            },
            { stream: false, keepBody: true, timeoutMs: STORE_TIMEOUT_MS },
          );
          const endMs = performance.now();
          let reply: { parts?: number; rollups?: number; ms?: number; d1_ms?: number; rows_written?: number; r2_ms?: number } = {};
          try {
            reply = JSON.parse(sent.body.toString()) as typeof reply;
          } catch {
            // a failed store's body need not be JSON
          }
          stored.push({
            consumer,
            startMs,
            endMs,
            n: o.batch,
            ok: sent.ok,
            parts: reply.parts ?? 0,
            rollups: reply.rollups ?? 0,
            ms: reply.ms ?? NaN,
            d1Ms: reply.d1_ms ?? NaN,
            rowsWritten: reply.rows_written ?? NaN,
            r2Ms: reply.r2_ms ?? NaN,
          });
          if (!sent.ok) {
            // As the queue does: the batch is delivered again (a store is idempotent by its batch id).
            taken--;
            if (++failures >= MAX_FAILURES)
              throw new Error(
                `${failures} stores in a row failed: ${sent.error} ${sent.body.toString().slice(0, 300)}; workerd: ${runtime.log.recent.slice(-5).join(" | ")}`,
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
  const figures = stepFigures(stored, { offered: o.rate, batch: o.batch, w0, w1, readyByEnd: readyBy(o.rate, o.batch, t0, w1) });
  return {
    ...figures,
    foreign_cpu_pct: foreignCpuPercent(cpuBefore, cpuAtEnd, os.cpus().length),
    workerd_cpu_pct: ((workerdAtEnd - workerdBefore) / (cpuAtEnd.at - cpuBefore.at)) * 100,
  };
}

function workerOptions(o: CeilingOptions, dir: string, sample: Sample, persistDir: string): MiniflareOptions {
  return {
    name: "ceiling",
    modules: [{ type: "ESModule", path: join(dir, "worker.js") }],
    modulesRoot: dir,
    compatibilityDate: o.cfg.compatibilityDate,
    compatibilityFlags: o.cfg.compatibilityFlags,
    d1Databases: ["DB"],
    r2Buckets: ["ARCHIVE"],
    durableObjects: { OUTBOX: { className: "OutboxBench", useSQLite: true } },
    bindings: { SAMPLE: JSON.stringify(sample) },
    defaultPersistRoot: persistDir,
    port: 0,
  };
}

/** One layout on a fresh D1 and R2: the rates stepped up until one is not kept up. */
async function runConfig(o: CeilingOptions, dir: string, sample: Sample, batch: number, consumers: number): Promise<ConfigRun> {
  const state = mkdtempSync(join(os.tmpdir(), "switchyard-ceiling-"));
  const removeState = () => rmSync(state, { recursive: true, force: true });
  const forgetState = o.cleanup.add("ceiling state", async () => removeState(), removeState);
  const runtime = await startRuntime(`ceiling ${batch}×${consumers}`, workerOptions(o, dir, sample, state), o.cleanup);
  try {
    await applyMigrations(runtime.mf, o.workerRoot, "DB");
    const start = await getJson<Size>(runtime.url, "/size");
    const steps: Step[] = [];
    const rates = ladder(o.rates, batch);
    const zipf = zipfTable(o.accounts);
    const next = { k: 0 };
    for (let rate: number | undefined = rates[0]; rate !== undefined && !o.stopping();) {
      const offered = rate;
      const measure = o.measure ?? ((_label, run) => run());
      const step = await measure(`ceiling ${batch}×${consumers} at ${offered}/s`, () =>
        runStep(runtime, { batch, consumers, rate: offered, warmupMs: o.warmupMs, windowMs: o.windowMs, zipf, next }),
      );
      steps.push(step);
      o.log(
        `  batches of ${batch}, ${consumers} consumer${consumers === 1 ? "" : "s"}: offered ${rate}/s → achieved ${Math.round(step.achieved)} records/s, ` +
          `${Math.round(step.parts_per_s)} parts/s, ${Math.round(step.rollups_per_s)} rollup rows/s, store p50 ${step.latency_p50_ms.toFixed(1)} ms p99 ${step.latency_p99_ms.toFixed(1)} ms ` +
          `(D1 ${step.d1_ms_per_batch.toFixed(2)} ms, R2 ${step.r2_ms_per_batch.toFixed(2)} ms a batch), workerd ${step.workerd_cpu_pct.toFixed(0)} % CPU, others ${step.foreign_cpu_pct.toFixed(0)} %` +
          `${step.failed_batches > 0 ? `, ${step.failed_batches} stores failed and were sent again` : ""}${step.kept_up ? "" : " — not kept up"}`,
      );
      rate = nextRate(rates, step);
    }
    const end = await getJson<Size>(runtime.url, "/size");
    return {
      batch,
      consumers,
      steps,
      bytes_start: start.bytes,
      bytes_end: end.bytes,
      records_end: next.k * batch,
      parts_end: end.parts,
      rollups_end: end.rollups,
      attempts_end: end.attempts,
    };
  } finally {
    await runtime.stop();
    forgetState();
    removeState();
  }
}

export async function ceilingScenario(o: CeilingOptions): Promise<CeilingSet> {
  o.log("scenario ceiling: bundling the bench Worker (storeBatch of the measured checkout)");
  const dir = await bundleWorker(o);
  const sample = catalogSample(o.workerRoot);
  const info = await (async () => {
    const state = mkdtempSync(join(os.tmpdir(), "switchyard-ceiling-"));
    const runtime = await startRuntime("ceiling (records)", workerOptions(o, dir, sample, state), o.cleanup);
    try {
      await applyMigrations(runtime.mf, o.workerRoot, "DB");
      const records = await getJson<{ record_bytes_mean: number; record_bytes_max: number }>(runtime.url, "/info");
      const outbox: OutboxRows[] = [];
      for (const batch of [1, 10, 100]) {
        const res = await fetch(new URL("/outbox", runtime.url), {
          method: "POST",
          body: JSON.stringify({ n: 1000, batch }),
          signal: AbortSignal.timeout(60_000),
        });
        if (!res.ok) throw new Error(`POST /outbox: ${res.status} ${(await res.text()).slice(0, 300)}`);
        outbox.push((await res.json()) as OutboxRows);
      }
      // D1 rows written per batch, with the records' carrier attempts (endpoint_attempts rows, until the
      // health fold reads per-minute rollups) and without: 40 batches of each size, accounts as in the steps.
      const d1: D1Rows[] = [];
      const zipf = zipfTable(o.accounts);
      for (const batch of [1, 10, 100])
        for (const attempts of [true, false]) {
          let rows = 0;
          let rollups = 0;
          let parts = 0;
          for (let k = 0; k < 40; k++) {
            const res = await fetch(new URL("/store", runtime.url), {
              method: "POST",
              body: JSON.stringify({ account: accountOf(k, zipf), n: batch, attempts }),
              signal: AbortSignal.timeout(60_000),
            });
            if (!res.ok) throw new Error(`POST /store: ${res.status} ${(await res.text()).slice(0, 300)}`);
            const r = (await res.json()) as { rows_written: number; rollups: number; parts: number };
            rows += r.rows_written;
            rollups += r.rollups;
            parts += r.parts;
          }
          d1.push({ batch, attempts, rows_per_batch: rows / 40, rollups_per_batch: rollups / 40, parts_per_batch: parts / 40 });
        }
      return { ...records, outbox, d1 };
    } finally {
      await runtime.stop();
      rmSync(state, { recursive: true, force: true });
    }
  })();
  const set: CeilingSet = {
    format: "switchyard-bench-records-ceiling/1",
    started_at: new Date().toISOString(),
    args: o.args,
    source: o.source,
    machine: o.machine,
    settings: { rates: o.rates, batches: o.batches, consumers: o.consumers, accounts: o.accounts, warmup_ms: o.warmupMs, window_ms: o.windowMs },
    record: { bytes_mean: info.record_bytes_mean, bytes_max: info.record_bytes_max },
    outbox: info.outbox,
    d1_rows: info.d1,
    runs: [],
  };
  o.log(`scenario ceiling: records of ${Math.round(set.record.bytes_mean)} B of JSON on average over ${o.accounts} accounts`);
  for (let index = 1; index <= o.repeat && !o.stopping(); index++) {
    const started = performance.now();
    const cpuAtStart = cpuSnapshot();
    const run: CeilingRun = { index, started_at: new Date().toISOString(), configs: [], foreign_cpu_pct: NaN, wall_s: NaN };
    set.runs.push(run);
    for (const batch of o.batches)
      for (const consumers of o.consumers) {
        if (o.stopping()) break;
        o.log(
          `scenario ceiling (run ${index} of ${o.repeat}): batches of ${batch} records, ${consumers} consumer${consumers === 1 ? "" : "s"}, a fresh D1 and R2`,
        );
        run.configs.push(await runConfig(o, dir, sample, batch, consumers));
      }
    run.foreign_cpu_pct = foreignCpuPercent(cpuAtStart, cpuSnapshot(), os.cpus().length);
    run.wall_s = (performance.now() - started) / 1000;
    o.onRun?.(set);
  }
  return set;
}
