// What Miniflare's entry Worker adds to each request, measured on one running router (all in one):
// rounds of a closed loop (non-stream, paid model) at concurrency 1 and 16, sent in turn to Miniflare's own
// address (its entry Worker, which then calls ours) and to the router's direct socket (workerd's HTTP server
// straight to the Worker, as production's edge hands a request to the Worker), the order alternating.
//
//   npx tsx bench/entry-cost.ts [--rounds 3] [--seconds 5]
//
// Per round, target and concurrency: requests/s, latency p50/p99 and workerd CPU per finished request
// (warm-up included). The bench (`npm run bench`) measures on direct sockets since issue 26; `--via-entry`
// measures the old way.
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runLoad } from "./load.ts";
import { Cleanup } from "./processes.ts";
import { SCRIPT_MODEL, startScriptRouter } from "./script-router.ts";
import { chatBody, chatRequest, cpuMs } from "./scenarios.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" }, seconds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
if (!(Number.isInteger(rounds) && rounds >= 1 && rounds <= 10) || !(seconds > 0 && seconds <= 60)) throw new Error("--rounds 1–10, --seconds 1–60");

const root = fileURLToPath(new URL("..", import.meta.url));
const cleanup = new Cleanup();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void cleanup.runAll().finally(() => process.exit(130)));
const round2 = (n: number) => Math.round(n * 100) / 100;
try {
  const { rt, key } = await startScriptRouter(root, "entry", cleanup);
  const body = chatBody({ model: SCRIPT_MODEL, stream: false, tokens: 16, words: "Entry" });
  const targets = { entry: rt.entryUrl, direct: rt.url };
  const rows: string[] = [];
  for (let round = 1; round <= rounds; round++)
    for (const concurrency of [1, 16])
      for (const via of round % 2 === 1 ? (["entry", "direct"] as const) : (["direct", "entry"] as const)) {
        const origin = targets[via];
        let finished = 0;
        const cpu0 = cpuMs(rt.workerdPid);
        const r = await runLoad({
          origin,
          concurrency,
          warmupMs: 1000,
          durationMs: seconds * 1000,
          timeoutMs: 60_000,
          stream: false,
          request: () => chatRequest({ kind: "router", origin, path: "/api/v1/chat/completions" }, key, body),
          onCompletion: () => finished++,
        });
        const cpu = Math.round(((cpuMs(rt.workerdPid) - cpu0) / Math.max(1, finished)) * 1000) / 1000;
        const row = {
          round,
          concurrency,
          via,
          rps: Math.round(r.rps),
          p50_ms: round2(r.latency_ms.p50),
          p99_ms: round2(r.latency_ms.p99),
          errors: r.errors,
          cpu_ms_per_request: cpu,
        };
        console.log(JSON.stringify(row));
        rows.push(`| ${round} | ${concurrency} | ${via} | ${row.rps} | ${row.p50_ms} | ${row.p99_ms} | ${row.errors} | ${cpu} |`);
      }
  console.log(
    ["", "| round | concurrency | via | req/s | p50 ms | p99 ms | errors | workerd CPU ms/req |", "|---:|---:|---|---:|---:|---:|---:|---:|", ...rows].join(
      "\n",
    ),
  );
} finally {
  await cleanup.runAll();
}
