// A standalone bench script's router: the set-up bench/entry-cost.ts, bench/allocations.ts and
// bench/gc-trace.ts share.
import { join } from "node:path";
import { startRuntime, startSimulatorProcess, type Cleanup, type Runtime } from "./processes.ts";
import { Admin, applyMigrations, buildBundle, routerOptions, type Bundle } from "./router.ts";
import { startSplitRouter } from "./split-router.ts";
import { readWranglerConfig } from "../scripts/wrangler-config.ts";

export const SCRIPT_MODEL = "meta-llama/llama-3.1-8b-instruct";

/**
 * A standalone bench script's router (bench/entry-cost.ts, bench/allocations.ts, bench/gc-trace.ts): this
 * checkout's deploy bundle in Miniflare beside the carrier simulator, migrations applied, one account with
 * plenty of credits and a key; everything stopped by `cleanup`. All in one workerd, or with `split` the
 * ledger and its D1 in a second one (bench/split-router.ts); `vars` override wrangler.toml's.
 */
export async function startScriptRouter(
  root: string,
  name: string,
  cleanup: Cleanup,
  extra: { inspectorPort?: number; split?: boolean; vars?: Record<string, string> } = {},
): Promise<{ bundle: Bundle; rt: Runtime; ledger?: Runtime; key: string }> {
  const bundle = await buildBundle(root, root, join(root, "bench", "out", `bundle-${name}`));
  const sim = await startSimulatorProcess(root, cleanup);
  const toml = readWranglerConfig(join(root, "wrangler.toml"));
  const cfg = { ...toml, vars: { ...toml.vars, ...extra.vars } };
  const adminToken = `bench-${name}-token`;
  const settings = { cfg, catalogPath: join(root, "catalog.json"), simulatorUrl: sim.url, adminToken };
  const d1Binding = cfg.d1Databases[0] ?? "DB";
  const inspector = extra.inspectorPort === undefined ? {} : { inspectorPort: extra.inspectorPort };
  const split = extra.split ? await startSplitRouter(name, bundle, settings, cleanup, { root, d1Binding, extra: inspector }) : undefined;
  const rt = split ?? (await startRuntime(name, { ...routerOptions(bundle, settings), ...inspector }, cleanup));
  await applyMigrations(rt, root, d1Binding);
  const { key } = await new Admin(rt.url.origin, adminToken).accountWithKey(`${name}@bench.invalid`, 1_000_000);
  return { bundle, rt, ...(split ? { ledger: split.ledger } : {}), key };
}

/** `--var NAME=VALUE` options (wrangler.toml vars the run overrides), as an object. */
export function parseVars(specs: readonly string[] = []): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const spec of specs) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(spec);
    if (!m) throw new Error(`--var takes NAME=VALUE, not "${spec}"`);
    vars[m[1]!] = m[2]!;
  }
  return vars;
}
