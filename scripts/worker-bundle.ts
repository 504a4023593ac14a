// The Worker as deployed, run locally without wrangler dev: the `wrangler deploy --dry-run` bundle in
// Miniflare (one workerd process) with local D1, KV, Durable Objects and queues from wrangler.toml. The
// benchmark and the load tests use it: wrangler dev's proxy answers 503 "Your worker restarted
// mid-request" to requests in flight when the machine is loaded, which is the dev tool, not the Worker.
import type { BuildOptions } from "esbuild";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Miniflare, MiniflareOptions } from "miniflare";
import type { WranglerConfig } from "./wrangler-config.ts";
import { carrierSecretBindings } from "./carrier-secrets.ts";

export type BuiltWorker = {
  dir: string;
  /** The entry module's path. */
  main: string;
  /** The uploadable modules (source maps excluded), file names in `dir`. */
  modules: string[];
  /** What wrangler printed. */
  output: string;
  build_ms: number;
};

/** `wrangler deploy --dry-run --outdir <dir>`, offline: `wrangler` of `root`, run in `workerRoot` (the checkout whose Worker it is). */
export async function buildWorker(root: string, workerRoot: string, dir: string): Promise<BuiltWorker> {
  const started = performance.now();
  const child = spawn(`${root}/node_modules/.bin/wrangler`, ["deploy", "--dry-run", "--outdir", dir], {
    cwd: workerRoot,
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (${code}):\n${output.slice(-3000)}`);
  const modules = readdirSync(dir).filter((f) => /\.(m?js|wasm|bin|txt|html|json)$/.test(f) && !f.endsWith(".map"));
  const main = modules.includes("index.js") ? "index.js" : modules.find((f) => f.endsWith(".js"));
  if (!main) throw new Error(`no Worker module in ${dir}`);
  return { dir, main: join(dir, main), modules, output, build_ms: performance.now() - started };
}

export type WorkerSettings = {
  cfg: WranglerConfig;
  /** The catalog.json whose carriers get a (local, fake) key each. */
  catalogPath: string;
  simulatorUrl: string;
  adminToken: string;
  /** Vars under wrangler.toml's [vars] (a default the config may override), and over them (always win). */
  defaults?: Record<string, string>;
  vars?: Record<string, string>;
  /** Local storage root (D1, KV, R2, Durable Objects); undefined = in memory. */
  persistDir?: string;
  port?: number;
  /** Extra modules beside the bundle (the benchmark's counting probe), and which one is the entry. */
  entry?: { path: string; contents: string };
};

/** Miniflare options that run the built Worker as wrangler would, every carrier pointed at the simulator. */
export function workerOptions(built: Pick<BuiltWorker, "dir" | "main">, s: WorkerSettings): MiniflareOptions {
  const main = { type: "ESModule" as const, path: built.main };
  return {
    name: "switchyard",
    modules: s.entry ? [{ type: "ESModule" as const, path: s.entry.path, contents: s.entry.contents }, main] : [main],
    modulesRoot: built.dir,
    compatibilityDate: s.cfg.compatibilityDate,
    compatibilityFlags: s.cfg.compatibilityFlags,
    d1Databases: s.cfg.d1Databases,
    kvNamespaces: s.cfg.kvNamespaces,
    r2Buckets: s.cfg.r2Buckets,
    durableObjects: s.cfg.durableObjects,
    queueProducers: s.cfg.queueProducers,
    queueConsumers: s.cfg.queueConsumers,
    bindings: {
      ...s.defaults,
      ...s.cfg.vars,
      ...s.vars,
      CARRIER_BASE_URL_OVERRIDE: s.simulatorUrl,
      ADMIN_TOKEN: s.adminToken,
      ...carrierSecretBindings(pathToFileURL(s.catalogPath)),
    },
    ...(s.persistDir ? { defaultPersistRoot: s.persistDir } : {}),
    port: s.port ?? 0,
  };
}

/** Applies migrations/*.sql in order, one statement at a time (drizzle-kit's `--> statement-breakpoint`). */
export async function applyMigrations(mf: Miniflare, root: string, binding: string): Promise<number> {
  const db = await mf.getD1Database(binding);
  const files = readdirSync(join(root, "migrations"))
    .filter((f) => f.endsWith(".sql"))
    .sort();
  let statements = 0;
  for (const file of files) {
    for (const sql of readFileSync(join(root, "migrations", file), "utf8").split("--> statement-breakpoint")) {
      if (!sql.trim()) continue;
      await db.prepare(sql.trim()).run();
      statements++;
    }
  }
  return statements;
}

/** esbuild's options for a script- or bench-only Worker bundled from the tree's src/ (the load test's, the write ceiling's): as wrangler bundles. */
export const TOOL_WORKER_BUILD: BuildOptions = {
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  external: ["cloudflare:*", "node:*"],
  logLevel: "warning",
};
