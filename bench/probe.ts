// Diagnostics (not timed): the router bundle behind bench/probe-worker.js, which counts Durable Object RPCs,
// D1 statements and batches, KV calls, outgoing fetches and the ledger's SQL statements. Reports them per
// request for a few request mixes, so the report can say where the router's work goes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { keepAliveAgent, send } from "./load.ts";
import { startRuntime, type Cleanup } from "./processes.ts";
import { Admin, applyMigrations, routerOptions, type Bundle } from "./router.ts";
import { chatBody, chatRequest, type Target } from "./scenarios.ts";
import type { WranglerConfig } from "../scripts/wrangler-config.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export type ProbeMix = { name: string; requests: number; ok: number; concurrency: number; per_request: Record<string, number> };

export async function countingProbe(
  root: string,
  bundle: Bundle,
  cfg: WranglerConfig,
  simulatorUrl: string,
  model: string,
  cleanup: Cleanup,
): Promise<{ mixes: ProbeMix[]; note: string }> {
  const token = "bench-probe-token";
  const source = readFileSync(fileURLToPath(new URL("./probe-worker.js", import.meta.url)), "utf8");
  const entry = { path: join(bundle.dir, "bench-probe-entry.js"), contents: source.replaceAll('"./index.js"', `"./${bundle.main.split("/").pop()}"`) };
  const rt = await startRuntime(
    "probe",
    routerOptions(bundle, { cfg, catalogPath: join(root, "catalog.json"), simulatorUrl, adminToken: token, entry }),
    cleanup,
  );
  try {
    await applyMigrations(rt, root, cfg.d1Databases[0] ?? "DB");
    const admin = new Admin(rt.url.origin, token);
    const account = await admin.accountWithKey("probe@bench.invalid", 1_000_000);
    const target: Target = { kind: "router", origin: rt.url, path: "/api/v1/chat/completions" };
    const counts = async (reset: boolean) => {
      const res = await fetch(new URL("/__bench/counts", rt.url), { method: reset ? "POST" : "GET" });
      return (await res.json()) as Record<string, number>;
    };
    const mixes: ProbeMix[] = [];
    const mix = async (name: string, requests: number, concurrency: number, stream: boolean, tokens: number) => {
      const body = chatBody({ model, stream, tokens, words: `Probe ${name}` });
      // Warm the isolate (catalog memo, key cache, lease) first, then count.
      const agent = keepAliveAgent(concurrency);
      const spec = () => chatRequest(target, account.key, body);
      for (let i = 0; i < 5; i++) await send(agent, rt.url, spec(), { stream, timeoutMs: 30_000 });
      await sleep(1500);
      await counts(true);
      let ok = 0;
      const deadline = Date.now() + 60_000;
      let sent = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (sent < requests && Date.now() < deadline) {
            sent++;
            if ((await send(agent, rt.url, spec(), { stream, timeoutMs: 30_000 })).ok) ok++;
          }
        }),
      );
      agent.destroy();
      // Settles, batches and the ledger's D1 flush run after the responses: give them time to land.
      await sleep(2000);
      const c = await counts(false);
      const per_request: Record<string, number> = {};
      for (const [k, v] of Object.entries(c).sort()) if (!k.startsWith("request ")) per_request[k] = Math.round((v / sent) * 1000) / 1000;
      mixes.push({ name, requests: sent, ok, concurrency, per_request });
    };
    await mix("non-stream, one at a time", 100, 1, false, 16);
    await mix("non-stream, concurrency 16", 400, 16, false, 16);
    await mix("stream of 200 chunks, one at a time", 30, 1, true, 200);
    return {
      mixes,
      note: "Calls counted by a wrapper around the unchanged bundle (bench/probe-worker.js), per request, after a warm-up, including work finished after the response (waitUntil, ledger alarms). worker:X = from the request path; ledger:X = inside the ledger Durable Object.",
    };
  } catch (err) {
    const logs = rt.log.recent.slice(-5).join(" | ");
    throw new Error(`${err instanceof Error ? err.message : String(err)}${logs ? ` (workerd: ${logs})` : ""}`);
  } finally {
    await rt.stop();
  }
}
