// Where the router's garbage comes from: a sampling heap profile of the router isolate (V8's
// HeapProfiler through workerd's inspector) under a closed loop of non-stream requests, every allocation
// counted, also those the next collection frees, mapped to the sources through wrangler's source map.
//
//   npx tsx bench/allocations.ts [--seconds 5] [--concurrency 16] [--top 30] [--split] [--survivors]
//
// Prints the bytes allocated per request by source file or package and by function (self). All in one
// workerd by default: the ledger Durable Object runs in the router's isolate then, so its allocations (and
// those of the local D1 API it calls) are in the figures; in production they are another isolate's —
// `--split` runs them in a workerd of their own (bench/split-router.ts). Less garbage per request means
// fewer young-generation collections. `--survivors` counts only what outlived a young-generation
// collection: what gets promoted to the old generation and so brings on the full collections that hold
// the isolate longest under load (bench/gc-trace.ts).
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { routerInspector } from "./inspector.ts";
import { runLoad } from "./load.ts";
import { Cleanup, freePort } from "./processes.ts";
import { Mapper, type CallFrame } from "./profile.ts";
import { SCRIPT_MODEL, startScriptRouter } from "./script-router.ts";
import { chatBody, chatRequest, type Target } from "./scenarios.ts";

type HeapNode = { callFrame: CallFrame; selfSize: number; children: HeapNode[] };

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "16" },
    top: { type: "string", default: "30" },
    split: { type: "boolean", default: false },
    survivors: { type: "boolean", default: false },
  },
});
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const top = Number(values.top);
if (!(seconds > 0 && seconds <= 60) || !(concurrency >= 1 && concurrency <= 256) || !(Number.isInteger(top) && top >= 1))
  throw new Error("--seconds 1–60, --concurrency 1–256, --top ≥ 1");

const root = fileURLToPath(new URL("..", import.meta.url));
const cleanup = new Cleanup();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void cleanup.runAll().finally(() => process.exit(130)));
try {
  const inspectorPort = await freePort();
  const { bundle, rt, key } = await startScriptRouter(root, "allocations", cleanup, { inspectorPort, split: values.split });
  const target: Target = { kind: "router", origin: rt.url, path: "/api/v1/chat/completions" };
  const body = chatBody({ model: SCRIPT_MODEL, stream: false, tokens: 16, words: "Allocations" });
  const load = (ms: number) =>
    runLoad({
      origin: rt.url,
      concurrency,
      warmupMs: 0,
      durationMs: ms,
      timeoutMs: 60_000,
      stream: false,
      request: () => chatRequest(target, key, body),
    });
  await load(2000); // warm-up: caches filled, code optimised
  const session = await routerInspector(inspectorPort);
  try {
    await session.send("HeapProfiler.enable");
    await session.send("HeapProfiler.startSampling", {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !values.survivors,
    });
    const result = await load(seconds * 1000);
    const { profile } = await session.send<{ profile: { head: HeapNode } }>("HeapProfiler.stopSampling", {}, 60_000);
    const mapper = new Mapper(basename(bundle.main), `${bundle.main}.map`);
    const byFunction = new Map<string, number>();
    const bySource = new Map<string, number>();
    let total = 0;
    const walk = (n: HeapNode) => {
      if (n.selfSize > 0) {
        const { source, fn } = mapper.place(n.callFrame);
        byFunction.set(fn, (byFunction.get(fn) ?? 0) + n.selfSize);
        bySource.set(source, (bySource.get(source) ?? 0) + n.selfSize);
        total += n.selfSize;
      }
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
    const requests = Math.max(1, result.requests);
    const kib = (bytes: number) => (bytes / requests / 1024).toFixed(2);
    const rows = (m: Map<string, number>) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([name, bytes]) => `| ${kib(bytes)} | ${name.replaceAll("|", "\\|").slice(0, 160)} |`);
    const what = values.survivors ? "outlived a young-generation collection" : "allocated";
    console.log(`\n### Allocations: non-stream, concurrency ${concurrency}, ${seconds} s, ${values.split ? "split" : "all in one"}, ${what}\n`);
    console.log(`${result.requests} requests, ${result.errors} errors; ${kib(total)} KiB ${what} per request (sampled every 1 KiB).\n`);
    console.log(["| KiB per request | source |", "|---:|---|", ...rows(bySource)].join("\n"));
    console.log(["", "| KiB per request | function (self) |", "|---:|---|", ...rows(byFunction)].join("\n"));
  } finally {
    session.close();
  }
} finally {
  await cleanup.runAll();
}
