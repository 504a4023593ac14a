// A production-like split of Switchyard for the benchmark: the router Worker in one Miniflare instance
// (one workerd process) and the per-account ledger Durable Object in another (its own workerd process),
// joined by Miniflare's dev registry — the way `wrangler dev` joins Workers of separate sessions.
//
// Both instances run the same `wrangler deploy --dry-run` bundle. The ledger instance names its Worker
// `switchyard-ledger` and hosts the LedgerObject class (with its own local D1 and KV, the migrations
// applied); the router instance binds LEDGER to `{ className: "LedgerObject", scriptName: "switchyard-ledger" }`.
// That script is not in the router's instance, so Miniflare binds LEDGER to a proxy Durable Object (in a
// small Worker of its own, "dev-registry-proxy", inside the router's workerd) that forwards every stub
// call — fetch and JS RPC alike — over workerd's debug port to the object in the ledger's workerd; both
// instances derive object ids from the same unique key (`switchyard-ledger-LedgerObject`), so
// `idFromName(account)` names the same object on both sides.
//
// What lands where:
// - the router's D1 (keys, accounts, what the admin API writes) and KV stay in the router's workerd: the
//   caller applies the router's migrations as for a single router (router.ts applyMigrations);
// - the ledger's alarm flushes generation records into the ledger instance's D1, not the router's: the
//   admin audit (`GET /admin/accounts/<id>/audit`, which counts records in the router's D1) does not see
//   them. The ledger's own figures (usage, holds, pending records) come from the object and are right.
// - RATE_LIMITER (the console's sign-in limiter) and the settle queue stay with the router.
//
// Run as a script, it compares the two layouts without a profiler: rounds of a closed loop (non-stream,
// paid model) against a freshly started all-in-one router and a freshly started split pair, alternating:
//
//   npx tsx bench/split-router.ts [--rounds 3] [--seconds 8] [--concurrency 16] [--via-entry]
//
// Per run: requests/s, latency p50/p99, errors, and workerd CPU per finished request (warm-up included) of
// each process — the router's and, split, the ledger's — and the CPU other processes took meanwhile.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { MiniflareOptions } from "miniflare";
import { runLoad } from "./load.ts";
import { Cleanup, cpuSnapshot, foreignCpuPercent, serveThroughEntry, startRuntime, startSimulatorProcess, type Runtime } from "./processes.ts";
import { Admin, applyMigrations, buildBundle, routerOptions, type Bundle, type RouterSettings } from "./router.ts";
import { chatBody, chatRequest, cpuMs } from "./scenarios.ts";
import { applyMigrations as applyWorkerMigrations } from "../scripts/worker-bundle.ts";
import { readWranglerConfig } from "../scripts/wrangler-config.ts";

/** The Worker name the ledger's instance registers; the router's LEDGER binding names it as its script. */
export const LEDGER_WORKER = "switchyard-ledger";

export type SplitRuntime = Runtime & {
  /** The ledger's Miniflare instance (its own workerd process). */
  ledger: Runtime;
  /** That workerd's pid, when it could be found (CPU and memory per process). */
  ledgerPid: number | undefined;
  /** Stops the ledger's instance (the router's `stop` stops the router's only; Cleanup stops both). */
  stopLedger(): Promise<void>;
};

/**
 * Starts the ledger's instance, then the router's, sharing a fresh dev registry directory; both are
 * registered with `cleanup` (as is the directory's removal). `extra` goes to the router's instance only
 * (e.g. `inspectorPort`). The ledger's D1 migrations are applied here; the router's are the caller's, as
 * with startRuntime. Resolves once a JS RPC call through the router's LEDGER binding has reached the
 * ledger's instance (a throwaway object's `totals()`).
 */
export async function startSplitRouter(
  name: string,
  bundle: Bundle,
  s: RouterSettings,
  cleanup: Cleanup,
  opts: { root: string; d1Binding: string; extra?: Partial<MiniflareOptions> },
): Promise<SplitRuntime> {
  const ledgerClass = s.cfg.durableObjects.LEDGER;
  if (!ledgerClass) throw new Error("wrangler.toml binds no LEDGER Durable Object");
  const registry = mkdtempSync(join(tmpdir(), "switchyard-split-registry-"));
  cleanup.add(`dev registry ${name}`, async () => rmSync(registry, { recursive: true, force: true }));

  // Started one after the other: startRuntime finds each instance's workerd as the one new since it began.
  const ledger = await startRuntime(
    `${name} ledger`,
    { ...routerOptions(bundle, s), name: LEDGER_WORKER, unsafeDevRegistryPath: registry } as MiniflareOptions,
    cleanup,
  );
  await applyWorkerMigrations(ledger.mf, opts.root, opts.d1Binding);

  const single = routerOptions(bundle, s) as MiniflareOptions & { durableObjects?: Record<string, unknown> };
  const router = await startRuntime(
    `${name} router`,
    {
      ...single,
      ...opts.extra,
      durableObjects: {
        ...single.durableObjects,
        LEDGER: { className: ledgerClass.className, scriptName: LEDGER_WORKER, useSQLite: ledgerClass.useSQLite },
      },
      unsafeDevRegistryPath: registry,
    } as MiniflareOptions,
    cleanup,
  );

  // The router's instance reads the registry when it starts; a call through the proxy proves the path.
  const ns = (await router.mf.getDurableObjectNamespace("LEDGER")) as unknown as {
    idFromName(name: string): unknown;
    get(id: unknown): { totals(): Promise<unknown> };
  };
  const stub = ns.get(ns.idFromName(`split-check-${Date.now()}`));
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await stub.totals();
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the router's LEDGER binding does not reach ${LEDGER_WORKER}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { ...router, ledger, ledgerPid: ledger.workerdPid, stopLedger: () => ledger.stop() };
}

export type LayoutRun = {
  layout: "all in one" | "split";
  round: number;
  rps: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  errors: number;
  /** workerd CPU per finished request (warm-up included), ms: the router's process and, split, the ledger's. */
  router_cpu_ms_per_request: number;
  ledger_cpu_ms_per_request?: number;
  foreign_cpu_pct: number;
};

export type LayoutOptions = { root: string; bundle: Bundle; settings: RouterSettings; rounds: number; seconds: number; concurrency: number; cleanup: Cleanup };

/**
 * Rounds of a closed loop (non-stream, paid model) against a freshly started all-in-one router and a
 * freshly started split pair, alternating; each run's figures, in order.
 */
export async function compareLayouts(o: LayoutOptions): Promise<LayoutRun[]> {
  const { root, bundle, settings, cleanup } = o;
  const round3 = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;
  const d1Binding = settings.cfg.d1Databases[0] ?? "DB";
  const body = chatBody({ model: "meta-llama/llama-3.1-8b-instruct", stream: false, tokens: 16, words: "Split" });
  const runs: LayoutRun[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    for (const layout of ["all in one", "split"] as const) {
      const split = layout === "split" ? await startSplitRouter("split", bundle, settings, cleanup, { root, d1Binding }) : undefined;
      const rt = split ?? (await startRuntime("all-in-one", routerOptions(bundle, settings), cleanup));
      try {
        await applyMigrations(rt, root, d1Binding);
        const account = await new Admin(rt.url.origin, settings.adminToken).accountWithKey(
          `split-${round}-${layout.replaceAll(" ", "-")}@bench.invalid`,
          1_000_000,
        );
        let finished = 0;
        const router0 = cpuMs(rt.workerdPid);
        const ledger0 = cpuMs(split?.ledgerPid);
        const machine0 = cpuSnapshot();
        const result = await runLoad({
          origin: rt.url,
          concurrency: o.concurrency,
          warmupMs: 2000,
          durationMs: o.seconds * 1000,
          timeoutMs: 60_000,
          stream: false,
          request: () => chatRequest({ kind: "router", origin: rt.url, path: "/api/v1/chat/completions" }, account.key, body),
          onCompletion: () => finished++,
        });
        const perRequest = (ms: number) => round3(ms / Math.max(1, finished));
        runs.push({
          layout,
          round,
          rps: round3(result.rps, 0),
          latency_p50_ms: round3(result.latency_ms.p50, 2),
          latency_p99_ms: round3(result.latency_ms.p99, 2),
          errors: result.errors,
          router_cpu_ms_per_request: perRequest(cpuMs(rt.workerdPid) - router0),
          ...(split ? { ledger_cpu_ms_per_request: perRequest(cpuMs(split.ledgerPid) - ledger0) } : {}),
          foreign_cpu_pct: round3(foreignCpuPercent(machine0, cpuSnapshot(), cpus().length), 1),
        });
      } finally {
        await rt.stop();
        await split?.stopLedger();
      }
    }
  }
  return runs;
}

/** The runs as a markdown table. */
export function layoutsMarkdown(runs: LayoutRun[]): string {
  return [
    "| round | layout | req/s | p50 ms | p99 ms | errors | router workerd CPU ms/req | ledger workerd CPU ms/req | other processes % |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ...runs.map(
      (r) =>
        `| ${r.round} | ${r.layout} | ${r.rps} | ${r.latency_p50_ms} | ${r.latency_p99_ms} | ${r.errors} | ${r.router_cpu_ms_per_request} | ${r.ledger_cpu_ms_per_request ?? "–"} | ${r.foreign_cpu_pct} |`,
    ),
  ].join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      seconds: { type: "string", default: "8" },
      concurrency: { type: "string", default: "16" },
      "via-entry": { type: "boolean", default: false },
    },
  });
  serveThroughEntry(values["via-entry"]);
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  if (!(rounds >= 1 && rounds <= 10) || !(seconds > 0 && seconds <= 60) || !(concurrency >= 1 && concurrency <= 256))
    throw new Error("--rounds 1–10, --seconds 1–60, --concurrency 1–256");
  const root = fileURLToPath(new URL("..", import.meta.url));
  const cleanup = new Cleanup();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void cleanup.runAll().finally(() => process.exit(130)));
  try {
    const bundle = await buildBundle(root, root, join(root, "bench", "out", "bundle-split"));
    const sim = await startSimulatorProcess(root, cleanup);
    const cfg = readWranglerConfig(join(root, "wrangler.toml"));
    const settings: RouterSettings = { cfg, catalogPath: join(root, "catalog.json"), simulatorUrl: sim.url, adminToken: "bench-split-token" };
    const runs = await compareLayouts({ root, bundle, settings, rounds, seconds, concurrency, cleanup });
    for (const r of runs) console.log(JSON.stringify(r));
    console.log("");
    console.log(layoutsMarkdown(runs));
  } finally {
    await cleanup.runAll();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
