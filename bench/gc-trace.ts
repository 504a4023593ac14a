// What the garbage collector costs the router under load: V8's own GC trace (`--trace-gc`, set through
// bench/v8-flags.ts) of every isolate in the router's workerd (and, split, the ledger's), during a closed
// loop of non-stream requests, beside the loop's latency.
//
//   npx tsx bench/gc-trace.ts [--seconds 10] [--concurrency 16] [--split] [--v8-flag F …] [--var NAME=VALUE …] [--json out.json] [--raw trace.txt]
//
// Per isolate (named by its address in the trace; the router's is the one with the most collections in
// the router's process): collections by kind, the main-thread pause of each (the figure V8 prints first:
// "a / b ms"), their total per second, the heap after them, and what each request left to the old
// generation (the growth of the heap from one young collection to the next, per request). workerd runs
// V8 without incremental marking, so every Mark-Compact is one stop-the-world pause on the isolate's
// thread, and they come as often as the old generation fills: the fewer bytes a request leaves there,
// the rarer they are. `--v8-flag` adds V8 flags (for example `--semi-space-growth-factor=4`) to show what
// a collector setting would change — a diagnostic only, production cannot set them. A trace line is
// counted when it arrives during the measured window.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runLoad, stats, type Stats } from "./load.ts";
import { Cleanup, type Runtime } from "./processes.ts";
import { chatBody, chatRequest, type Target } from "./scenarios.ts";
import { parseVars, SCRIPT_MODEL, startScriptRouter } from "./script-router.ts";
import { useV8Flags } from "./v8-flags.ts";

export type Collection = { isolate: string; kind: string; pauseMs: number; heapAfterMb: number; reason: string };

/** One line of V8's `--trace-gc` output, or undefined for any other line. */
export function parseTraceLine(line: string): Collection | undefined {
  const m = /^\[\d+:(0x[0-9a-f]+)\]\s+[\d.]+ ms: ([A-Za-z][\w ()-]*?) [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB,.*? ([\d.]+) \/ [\d.]+ ms/.exec(line);
  if (!m) return undefined;
  // What started it: the text after the last ") " (e.g. "allocation failure; GC in old space requested").
  const reason = line
    .slice(line.lastIndexOf(") ") + 2)
    .replace(/;\s*$/, "")
    .trim();
  return {
    reason,
    isolate: m[1]!,
    kind: m[2]!,
    pauseMs: Number(m[4]),
    heapAfterMb: Number(m[3]),
  };
}

type KindSummary = { count: number; reasons: Record<string, number>; per_s: number; pause_ms: Stats; pause_total_ms_per_s: number };
export type IsolateSummary = {
  process: string;
  isolate: string;
  heap_after_mb: { min: number; max: number };
  /** What the heap kept after each young collection over the one before (promotions and old-space allocations), per second. */
  old_growth_mb_per_s: number;
  kinds: Record<string, KindSummary>;
};

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

export function summarize(process: string, collections: Collection[], seconds: number): IsolateSummary[] {
  const byIsolate = new Map<string, Collection[]>();
  for (const c of collections) byIsolate.set(c.isolate, [...(byIsolate.get(c.isolate) ?? []), c]);
  return [...byIsolate]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([isolate, list]) => {
      const kinds: Record<string, KindSummary> = {};
      for (const kind of new Set(list.map((c) => c.kind))) {
        const of = list.filter((c) => c.kind === kind);
        const pauses = of.map((c) => c.pauseMs);
        const s = stats(pauses);
        const reasons: Record<string, number> = {};
        for (const c of of) reasons[c.reason] = (reasons[c.reason] ?? 0) + 1;
        kinds[kind] = {
          count: of.length,
          reasons,
          per_s: round(of.length / seconds),
          pause_ms: { p50: round(s.p50), p90: round(s.p90), p99: round(s.p99), mean: round(s.mean), max: round(s.max) },
          pause_total_ms_per_s: round(pauses.reduce((a, b) => a + b, 0) / seconds),
        };
      }
      const heap = list.map((c) => c.heapAfterMb);
      // Between two young collections in a row the heap after them grows by what went to the old generation.
      let growth = 0;
      for (let i = 1; i < list.length; i++)
        if (list[i]!.kind === "Scavenge" && list[i - 1]!.kind === "Scavenge") growth += Math.max(0, list[i]!.heapAfterMb - list[i - 1]!.heapAfterMb);
      return { process, isolate, heap_after_mb: { min: Math.min(...heap), max: Math.max(...heap) }, old_growth_mb_per_s: round(growth / seconds), kinds };
    });
}

function markdown(name: string, load: { requests: number; rps: number; latency_ms: Stats }, isolates: IsolateSummary[]): string {
  const l = load.latency_ms;
  const lines = [
    `### GC trace: ${name}`,
    "",
    `${load.requests} requests, ${round(load.rps, 0)}/s; latency p50 ${round(l.p50)} ms, p90 ${round(l.p90)}, p99 ${round(l.p99)}, max ${round(l.max)} ms.`,
    "",
    "| process | isolate | collection | per s | pause p50 | p99 | max ms | pause ms per s | heap after MB | to the old generation, KiB per request | started by |",
    "|---|---|---|---:|---:|---:|---:|---:|---|---:|---|",
  ];
  for (const i of isolates)
    for (const [kind, k] of Object.entries(i.kinds))
      lines.push(
        `| ${i.process} | ${i.isolate} | ${kind} | ${k.per_s} | ${k.pause_ms.p50} | ${k.pause_ms.p99} | ${k.pause_ms.max} | ${k.pause_total_ms_per_s} | ${i.heap_after_mb.min}–${i.heap_after_mb.max} | ${round((i.old_growth_mb_per_s * 1024) / load.rps)} | ${Object.entries(
          k.reasons,
        )
          .map(([r, n]) => `${r} (${n})`)
          .join("; ")} |`,
      );
  return lines.join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "10" },
      concurrency: { type: "string", default: "16" },
      split: { type: "boolean", default: false },
      "v8-flag": { type: "string", multiple: true },
      var: { type: "string", multiple: true },
      json: { type: "string" },
      raw: { type: "string" },
    },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  if (!(seconds > 0 && seconds <= 120) || !(concurrency >= 1 && concurrency <= 256)) throw new Error("--seconds 1–120, --concurrency 1–256");
  const vars = parseVars(values.var);
  const extraFlags = values["v8-flag"] ?? [];
  const root = fileURLToPath(new URL("..", import.meta.url));
  useV8Flags(["--trace-gc", ...extraFlags], join(root, "bench", "out", "v8-flags"));
  const cleanup = new Cleanup();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void cleanup.runAll().finally(() => process.exit(130)));
  try {
    const { rt, ledger, key } = await startScriptRouter(root, "gc-trace", cleanup, { split: values.split, vars });
    const target: Target = { kind: "router", origin: rt.url, path: "/api/v1/chat/completions" };
    const body = chatBody({ model: SCRIPT_MODEL, stream: false, tokens: 16, words: "Collections" });
    const load = (ms: number) =>
      runLoad({ origin: rt.url, concurrency, warmupMs: 0, durationMs: ms, timeoutMs: 60_000, stream: false, request: () => chatRequest(target, key, body) });
    await load(2000); // warm-up: caches filled, code optimised
    const seen = new Map<string, Collection[]>();
    const raw: string[] = [];
    const listen = (label: string, r: Runtime | undefined) => {
      if (!r) return;
      seen.set(label, []);
      r.log.onLine = (line) => {
        const c = parseTraceLine(line);
        if (c) seen.get(label)!.push(c);
        if (values.raw) raw.push(`${label} ${line}`);
      };
    };
    listen("router", rt);
    listen("ledger", ledger);
    const result = await load(seconds * 1000);
    rt.log.onLine = undefined;
    if (ledger) ledger.log.onLine = undefined;
    const isolates = [...seen].flatMap(([label, list]) => summarize(label, list, result.duration_s));
    const name = `non-stream, concurrency ${concurrency}, ${seconds} s, ${values.split ? "split" : "all in one"}${
      extraFlags.length ? `, V8 ${extraFlags.join(" ")}` : ""
    }${
      Object.keys(vars).length
        ? `, ${Object.entries(vars)
            .map(([k, v]) => `${k}=${v}`)
            .join(" ")}`
        : ""
    }`;
    console.log(markdown(name, result, isolates));
    if (values.raw) writeFileSync(values.raw, raw.join("\n") + "\n");
    if (values.json)
      writeFileSync(
        values.json,
        JSON.stringify({ name, load: { requests: result.requests, rps: result.rps, latency_ms: result.latency_ms }, isolates }, null, 2) + "\n",
      );
  } finally {
    await cleanup.runAll();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
