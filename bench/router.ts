// Switchyard as the benchmark runs it: the `wrangler deploy --dry-run` bundle in Miniflare with local
// D1, KV and Durable Objects (persisted to a temp dir, as `npm start` does), the D1 migrations applied,
// accounts and keys made through the admin API.
import { existsSync, readFileSync, statSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { MiniflareOptions } from "miniflare";
import type { Runtime } from "./processes.ts";
import { applyMigrations as applyWorkerMigrations, buildWorker, workerOptions, type WorkerSettings } from "../scripts/worker-bundle.ts";
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

/** The Worker built as `wrangler deploy --dry-run` builds it (scripts/worker-bundle.ts), with its sizes. */
export async function buildBundle(root: string, workerRoot: string, dir: string): Promise<Bundle> {
  const built = await buildWorker(root, workerRoot, dir);
  let total = 0;
  let gzip = 0;
  for (const f of built.modules) {
    const bytes = readFileSync(join(dir, f));
    total += statSync(join(dir, f)).size;
    gzip += gzipSync(bytes).length;
  }
  const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(built.output);
  return {
    dir,
    main: built.main,
    total_bytes: total,
    gzip_bytes: gzip,
    wrangler_total_kib: m ? Number(m[1]) : null,
    wrangler_gzip_kib: m ? Number(m[2]) : null,
    build_ms: built.build_ms,
    composition: composition(built.main),
  };
}

export type RouterSettings = Omit<WorkerSettings, "defaults" | "vars">;

/**
 * The router in Miniflare; a generous carrier timeout, and records leaving each ledger a second after they
 * settle (the scenarios check, bounded, that every request's record was stored: a deployment's flush delay
 * grows for quiet accounts up to minutes), unless wrangler.toml's [vars] (or --var) set them.
 */
export function routerOptions(bundle: Bundle, s: RouterSettings): MiniflareOptions {
  return workerOptions(bundle, { ...s, defaults: { CARRIER_TIMEOUT_MS: "30000", RECORDS_FLUSH_MAX_DELAY_MS: "1000" } });
}

/** Applies the checkout's D1 migrations to the router's local database. */
export function applyMigrations(runtime: Runtime, root: string, binding: string): Promise<number> {
  return applyWorkerMigrations(runtime.mf, root, binding);
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

/** The paid model the standalone bench scripts load the router with: key auth, admission, settle and the record on every request. */
