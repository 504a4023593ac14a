// Scenario `fold` (`npm run bench -- --only fold`, a diagnostic outside the default set): the Cron
// Trigger's endpoint health fold over the minute rollups (issue 36), at several request rates. A
// bench-only Worker (bench/fold-worker.js, bundled here with esbuild from the measured checkout's own
// src/db/endpoint-minutes.ts) runs in Miniflare with an in-memory local D1, the checkout's migrations/
// applied, one instance per rate. Each is filled with what a day of that rate leaves in the rollups
// (synthetic, over the catalog's text endpoints: bench/fold-worker.js), then the fold runs `repeat` times
// on each, alternating between the rates so that drift on the machine falls on all of them alike. Per
// rate: the fold's D1 time (the statements' own durations, as D1 reports them), its wall time seen from
// here (one HTTP round trip, the JavaScript that reads percentiles off the histograms included) and the
// rows it read; median and range over the repeats.
//
// Everything is on 127.0.0.1 and bounded in time (each request 120 s); Miniflare is stopped by the
// bench's Cleanup also on errors and signals.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import type { MiniflareOptions } from "miniflare";
import { startRuntime, type Cleanup, type Runtime } from "./processes.ts";
import { applyMigrations, TOOL_WORKER_BUILD } from "../scripts/worker-bundle.ts";
import type { WranglerConfig } from "../scripts/wrangler-config.ts";

export type FoldOptions = {
  root: string;
  workerRoot: string;
  outDir: string;
  cfg: WranglerConfig;
  repeat: number;
  rates: number[];
  cleanup: Cleanup;
  log: (msg: string) => void;
  stopping: () => boolean;
};

type Filled = { endpoints: number; minute_rows: number; histogram_rows: number; attempts: number; samples: number };
type FoldReply = { endpoints: number; percentiles: number; statements: Array<{ d1_ms: number; rows_read: number; rows_written: number }> };
type Spread = { median: number; min: number; max: number };
export type FoldRate = {
  rate: number;
  filled: Filled;
  d1_ms: Spread;
  wall_ms: Spread;
  rows_read: number;
  /** Every repeat's figures, in order. */
  runs: Array<{ d1_ms: number; wall_ms: number; rows_read: number }>;
};
export type FoldSet = { format: "switchyard-bench-fold/1"; started_at: string; repeat: number; rates: FoldRate[] };

const REQUEST_TIMEOUT_MS = 120_000;
const D1 = "DB";

async function postJson<T>(url: URL, path: string, body: unknown): Promise<T> {
  const res = await fetch(new URL(path, url), { method: "POST", body: JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** The catalog's text models and their carriers: the endpoints the synthetic rollups name. */
function catalogSample(workerRoot: string) {
  const catalog = JSON.parse(readFileSync(join(workerRoot, "catalog.json"), "utf8")) as {
    models: Array<{ id: string; output_modalities?: string[]; endpoints: Array<{ provider: string }> }>;
  };
  return {
    models: catalog.models
      .filter((m) => !m.output_modalities || m.output_modalities.includes("text"))
      .map((m) => ({ id: m.id, carriers: m.endpoints.map((e) => ({ slug: e.provider })) })),
  };
}

export async function foldScenario(o: FoldOptions): Promise<FoldSet> {
  o.log("scenario fold: bundling the bench Worker (foldMinutes of the measured checkout)");
  const dir = join(o.outDir, "fold");
  await build({
    stdin: { contents: readFileSync(join(o.root, "bench", "fold-worker.js"), "utf8"), resolveDir: join(o.workerRoot, "bench"), sourcefile: "fold-worker.js" },
    ...TOOL_WORKER_BUILD,
    outfile: join(dir, "worker.js"),
  });
  const options: MiniflareOptions = {
    name: "fold",
    modules: [{ type: "ESModule", path: join(dir, "worker.js") }],
    modulesRoot: dir,
    compatibilityDate: o.cfg.compatibilityDate,
    compatibilityFlags: o.cfg.compatibilityFlags,
    d1Databases: [D1],
    bindings: { SAMPLE: JSON.stringify(catalogSample(o.workerRoot)) },
    port: 0,
  };
  const now = Date.now();
  const runtimes: Array<{ rate: number; runtime: Runtime; filled: Filled; runs: FoldRate["runs"] }> = [];
  try {
    for (const rate of o.rates) {
      const runtime = await startRuntime(`fold at ${rate}/s`, options, o.cleanup);
      await applyMigrations(runtime.mf, o.workerRoot, D1);
      const t0 = performance.now();
      const filled = await postJson<Filled>(runtime.url, "/fill", { rate, now });
      o.log(
        `  ${rate} requests/s for a day: ${filled.attempts.toLocaleString("en")} attempts over ${filled.endpoints} endpoints → ` +
          `${filled.minute_rows} minute rows, ${filled.histogram_rows} histogram rows (${filled.samples.toLocaleString("en")} samples), filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      runtimes.push({ rate, runtime, filled, runs: [] });
      await postJson(runtime.url, "/fold", { now }); // a first fold, not counted: the Worker's first request and a cold page cache
    }
    for (let i = 0; i < o.repeat && !o.stopping(); i++)
      for (const r of i % 2 ? [...runtimes].reverse() : runtimes) {
        const t0 = performance.now();
        const reply = await postJson<FoldReply>(r.runtime.url, "/fold", { now });
        const wall = performance.now() - t0;
        const d1 = reply.statements.reduce((s, x) => s + x.d1_ms, 0);
        const rowsRead = reply.statements.reduce((s, x) => s + x.rows_read, 0);
        if (reply.statements.some((x) => x.rows_written > 0)) throw new Error("the fold pruned filled minutes: the fill and the fold disagree on the windows");
        r.runs.push({ d1_ms: d1, wall_ms: wall, rows_read: rowsRead });
      }
  } finally {
    for (const r of runtimes) await r.runtime.stop();
  }
  return {
    format: "switchyard-bench-fold/1",
    started_at: new Date(now).toISOString(),
    repeat: o.repeat,
    rates: runtimes.map((r) => ({
      rate: r.rate,
      filled: r.filled,
      d1_ms: spread(r.runs.map((x) => x.d1_ms)),
      wall_ms: spread(r.runs.map((x) => x.wall_ms)),
      rows_read: spread(r.runs.map((x) => x.rows_read)).median,
      runs: r.runs,
    })),
  };
}

export function foldMarkdown(set: FoldSet): string {
  const f = (s: Spread) => `${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)})`;
  return [
    `Health fold over minute rollups, ${set.repeat} folds per rate (median (range)):`,
    "",
    "| requests/s for a day | attempts | minute rows | histogram rows | rows read per fold | fold D1 ms | fold wall ms |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...set.rates.map(
      (r) =>
        `| ${r.rate.toLocaleString("en")} | ${r.filled.attempts.toLocaleString("en")} | ${r.filled.minute_rows.toLocaleString("en")} | ${r.filled.histogram_rows.toLocaleString("en")} | ${r.rows_read.toLocaleString("en")} | ${f(r.d1_ms)} | ${f(r.wall_ms)} |`,
    ),
  ].join("\n");
}
