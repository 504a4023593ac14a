// Switchyard as the benchmark runs it: the `wrangler deploy --dry-run` bundle in Miniflare with local
// D1, KV and Durable Objects (persisted to a temp dir, as `npm start` does), the D1 migrations applied,
// accounts and keys made through the admin API.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { pathToFileURL } from "node:url";
import type { MiniflareOptions } from "miniflare";
import type { WranglerConfig } from "./wrangler-config.ts";
import type { Runtime } from "./processes.ts";
import { carrierSecretBindings } from "../scripts/carrier-secrets.ts";
import type { AccountAudit as Audit } from "../scripts/soak-run.ts";

export type { Audit };

export type Bundle = {
  dir: string;
  /** The Worker's entry module. */
  main: string;
  /** The modules wrangler would upload (source maps excluded), bytes. */
  total_bytes: number;
  gzip_bytes: number;
  /** What wrangler printed ("Total Upload: … KiB / gzip: … KiB"), when it did. */
  wrangler_total_kib: number | null;
  wrangler_gzip_kib: number | null;
  build_ms: number;
  /** What the entry module is made of (from the source map): package or source folder, KiB of minified output. */
  composition: Array<{ name: string; kib: number; pct: number }>;
};

/** Attributes the entry module's bytes to packages and source folders through its source map (sampled every 32 bytes). */
function composition(mainFile: string): Bundle["composition"] {
  const mapFile = `${mainFile}.map`;
  if (!existsSync(mapFile)) return [];
  const map = new SourceMap(JSON.parse(readFileSync(mapFile, "utf8")) as SourceMapPayload);
  const bytes = new Map<string, number>();
  let total = 0;
  const STEP = 32;
  readFileSync(mainFile, "utf8")
    .split("\n")
    .forEach((text, line) => {
      for (let col = 0; col < text.length; col += STEP) {
        const entry = map.findEntry(line, col);
        const source = "originalSource" in entry ? entry.originalSource : "(no source)";
        const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
        // drizzle-orm's own source maps name its files node_modules/src/…
        const name = pkg ? (pkg === "src" ? "drizzle-orm" : pkg) : (/(?:^|\/)(src\/[^/]+)/.exec(source)?.[1] ?? source.replace(/^(\.\.\/)+/, ""));
        const n = Math.min(STEP, text.length - col);
        bytes.set(name, (bytes.get(name) ?? 0) + n);
        total += n;
      }
    });
  return [...bytes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([name, n]) => ({ name, kib: Math.round((n / 1024) * 10) / 10, pct: Math.round((n / total) * 1000) / 10 }));
}

/** `wrangler deploy --dry-run --outdir <dir>`, offline. */
/** `wrangler` (this checkout's) run in `workerRoot`, the checkout whose Worker is measured. */
export async function buildBundle(root: string, workerRoot: string, dir: string): Promise<Bundle> {
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
  const build_ms = performance.now() - started;
  const modules = readdirSync(dir).filter((f) => /\.(m?js|wasm|bin|txt|html|json)$/.test(f) && !f.endsWith(".map"));
  const main = modules.includes("index.js") ? "index.js" : modules.find((f) => f.endsWith(".js"));
  if (!main) throw new Error(`no Worker module in ${dir}`);
  let total = 0;
  let gzip = 0;
  for (const f of modules) {
    const bytes = readFileSync(join(dir, f));
    total += statSync(join(dir, f)).size;
    gzip += gzipSync(bytes).length;
  }
  const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(output);
  return {
    dir,
    main: join(dir, main),
    total_bytes: total,
    gzip_bytes: gzip,
    wrangler_total_kib: m ? Number(m[1]) : null,
    wrangler_gzip_kib: m ? Number(m[2]) : null,
    build_ms,
    composition: composition(join(dir, main)),
  };
}

export type RouterSettings = {
  cfg: WranglerConfig;
  /** The measured checkout's catalog.json: one carrier key per provider. */
  catalogPath: string;
  simulatorUrl: string;
  adminToken: string;
  /** Local storage root (D1, KV, Durable Objects); undefined = in memory. */
  persistDir?: string;
  port?: number;
  /** Extra modules beside the bundle (the counting probe's wrapper), and which one is the entry. */
  entry?: { path: string; contents: string };
};

export function routerOptions(bundle: Bundle, s: RouterSettings): MiniflareOptions {
  const main = { type: "ESModule" as const, path: bundle.main };
  return {
    name: "switchyard",
    modules: s.entry ? [{ type: "ESModule" as const, path: s.entry.path, contents: s.entry.contents }, main] : [main],
    modulesRoot: bundle.dir,
    compatibilityDate: s.cfg.compatibilityDate,
    compatibilityFlags: s.cfg.compatibilityFlags,
    d1Databases: s.cfg.d1Databases,
    kvNamespaces: s.cfg.kvNamespaces,
    durableObjects: s.cfg.durableObjects,
    queueProducers: s.cfg.queueProducers,
    queueConsumers: s.cfg.queueConsumers,
    bindings: {
      CARRIER_TIMEOUT_MS: "30000",
      ...s.cfg.vars, // wrangler.toml's [vars] and --var: may override the timeout, never what the bench wires up
      CARRIER_BASE_URL_OVERRIDE: s.simulatorUrl,
      ADMIN_TOKEN: s.adminToken,
      ...carrierSecretBindings(pathToFileURL(s.catalogPath)),
    },
    ...(s.persistDir ? { defaultPersistRoot: s.persistDir } : {}),
    port: s.port ?? 0,
  };
}

/** Applies migrations/*.sql in order, one statement at a time (drizzle-kit's `--> statement-breakpoint`). */
export async function applyMigrations(runtime: Runtime, root: string, binding: string): Promise<number> {
  const db = await runtime.mf.getD1Database(binding);
  const files = readdirSync(join(root, "migrations")).filter((f) => f.endsWith(".sql")).sort();
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

/** The service's /admin API. */
export class Admin {
  constructor(
    private readonly origin: string,
    private readonly token: string,
  ) {}

  async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.origin}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }

  /** A new account with `credits` USD and one key. */
  async accountWithKey(email: string, credits: number): Promise<{ id: string; key: string }> {
    const account = await this.call<{ id: string }>("POST", "/accounts", { email, credits });
    const key = await this.call<{ key: string }>("POST", "/keys", { account: account.id, label: "bench" });
    return { id: account.id, key: key.key };
  }

  audit(id: string): Promise<Audit> {
    return this.call<Audit>("GET", `/accounts/${encodeURIComponent(id)}/audit`);
  }
}

