// Diagnostics (not timed): a V8 CPU profile of Switchyard under load, taken through workerd's inspector
// (Miniflare's inspectorPort), mapped back to the sources through wrangler's source map. Says where the
// router isolate's CPU goes: by source file or package, and the hottest functions. (Local D1 and KV run in
// Miniflare's own Workers, outside this isolate; the ledger Durable Object runs inside it.)
import { existsSync, readFileSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { basename, join } from "node:path";
import { routerInspector, type InspectorSession } from "./inspector.ts";
import { runLoad } from "./load.ts";
import { freePort, startRuntime, type Cleanup } from "./processes.ts";
import { Admin, applyMigrations, routerOptions, type Bundle } from "./router.ts";
import { chatBody, chatRequest, type Target } from "./scenarios.ts";
import type { WranglerConfig } from "../scripts/wrangler-config.ts";

export type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number };
export type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
export type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

export type ProfileShare = { name: string; pct: number };
export type ProfileSummary = {
  name: string;
  requests: number;
  /** Sampled CPU time of the isolate, ms (idle excluded), and per request. */
  busy_ms: number;
  busy_ms_per_request: number;
  /** Share of busy time by source file (src/…), package (node_modules/<pkg>) or runtime category. */
  by_source: ProfileShare[];
  /** The hottest functions by self time: `source:line  code`. */
  top_functions: ProfileShare[];
  /** Runtime built-ins (fetch, exec, getReader, …) by self time, each with the function of ours that called it. */
  top_builtins_by_caller: ProfileShare[];
};

const IDLE = new Set(["(idle)", "(program)"]);

function packageOf(source: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  // drizzle-orm's own source maps name its files node_modules/src/…
  if (m) return m[1] === "src" ? "node_modules/drizzle-orm" : `node_modules/${m[1]}`;
  const src = /(?:^|\/)(src\/.*)$/.exec(source);
  return src ? src[1]! : source.replace(/^(\.\.\/)+/, "");
}

/** Maps frames of the bundle to their sources; everything else keeps its runtime name. */
export class Mapper {
  private readonly map: SourceMap | undefined;
  private readonly contents = new Map<string, string[]>();

  constructor(
    private readonly bundleName: string,
    mapFile: string,
  ) {
    if (!existsSync(mapFile)) return;
    const payload = JSON.parse(readFileSync(mapFile, "utf8")) as SourceMapPayload & { sourcesContent?: Array<string | null> };
    this.map = new SourceMap(payload);
    payload.sources.forEach((s, i) => {
      const text = payload.sourcesContent?.[i];
      if (text) this.contents.set(s, text.split("\n"));
    });
  }

  place(frame: CallFrame): { source: string; fn: string } {
    if (frame.url === "" || !frame.url.endsWith(this.bundleName)) {
      const label = frame.functionName || "(unnamed runtime code)";
      if (frame.url !== "") return { source: `(runtime JS: ${frame.url.slice(0, 60)})`, fn: `${label} (${frame.url.slice(0, 60)}:${frame.lineNumber + 1})` };
      return label.startsWith("(") ? { source: label, fn: label } : { source: "(runtime built-ins)", fn: `${label} (built-in)` };
    }
    const entry = this.map?.findEntry(frame.lineNumber, frame.columnNumber);
    if (!entry || !("originalSource" in entry)) return { source: "(bundle, unmapped)", fn: frame.functionName || "(anonymous)" };
    const source = packageOf(entry.originalSource);
    const line = this.contents.get(entry.originalSource)?.[entry.originalLine]?.trim().slice(0, 90) ?? "";
    return { source, fn: `${source}:${entry.originalLine + 1}  ${line}` };
  }
}

function summarize(name: string, profile: Profile, mapper: Mapper, requests: number): ProfileSummary {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const bySource = new Map<string, number>();
  const byFn = new Map<string, number>();
  const byBuiltinCaller = new Map<string, number>();
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byNode.get(id);
    if (!node || IDLE.has(node.callFrame.functionName)) continue;
    const { source, fn } = mapper.place(node.callFrame);
    busy += us;
    bySource.set(source, (bySource.get(source) ?? 0) + us);
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    if (source === "(runtime built-ins)") {
      // The nearest caller that is not itself a built-in.
      let up = parentOf.get(id);
      let caller = "(none)";
      for (let hops = 0; up !== undefined && hops < 20; hops++, up = parentOf.get(up)) {
        const placed = mapper.place(byNode.get(up)!.callFrame);
        if (placed.source !== "(runtime built-ins)") {
          caller = placed.fn;
          break;
        }
      }
      const key = `${fn} ← ${caller}`;
      byBuiltinCaller.set(key, (byBuiltinCaller.get(key) ?? 0) + us);
    }
  }
  const shares = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => ({ name: k, pct: Math.round((us / busy) * 1000) / 10 }));
  return {
    name,
    requests,
    busy_ms: Math.round(busy / 1000),
    busy_ms_per_request: requests > 0 ? Math.round((busy / 1000 / requests) * 1000) / 1000 : NaN,
    by_source: shares(bySource, 15),
    top_functions: shares(byFn, 15),
    top_builtins_by_caller: shares(byBuiltinCaller, 15),
  };
}

export async function cpuProfiles(
  root: string,
  bundle: Bundle,
  cfg: WranglerConfig,
  simulatorUrl: string,
  model: string,
  durationMs: number,
  cleanup: Cleanup,
): Promise<ProfileSummary[]> {
  const token = "bench-profile-token";
  const inspectorPort = await freePort();
  const rt = await startRuntime(
    "profile",
    { ...routerOptions(bundle, { cfg, catalogPath: join(root, "catalog.json"), simulatorUrl, adminToken: token }), inspectorPort },
    cleanup,
  );
  let session: InspectorSession | undefined;
  try {
    await applyMigrations(rt, root, cfg.d1Databases[0] ?? "DB");
    const account = await new Admin(rt.url.origin, token).accountWithKey("profile@bench.invalid", 1_000_000);
    session = await routerInspector(inspectorPort);
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: 200 });
    const mapper = new Mapper(basename(bundle.main), `${bundle.main}.map`);
    const routerTarget: Target = { kind: "router", origin: rt.url, path: "/api/v1/chat/completions" };
    const summaries: ProfileSummary[] = [];
    for (const mix of [
      { name: "non-stream, concurrency 16", stream: false, tokens: 16, concurrency: 16 },
      { name: "2,000-chunk streams, concurrency 1", stream: true, tokens: 2000, concurrency: 1 },
      // Short streams show the work done once per stream (key, admission, settle, record), which long ones hide.
      { name: "200-chunk streams, concurrency 1", stream: true, tokens: 200, concurrency: 1 },
    ]) {
      const body = chatBody({ model, stream: mix.stream, tokens: mix.tokens, words: "Profile" });
      const load = (ms: number) =>
        runLoad({
          origin: rt.url,
          concurrency: mix.concurrency,
          warmupMs: 0,
          durationMs: ms,
          timeoutMs: 60_000,
          stream: mix.stream,
          request: () => chatRequest(routerTarget, account.key, body),
        });
      await load(1000); // warm-up, not profiled
      await session.send("Profiler.start");
      const result = await load(durationMs);
      const { profile } = await session.send<{ profile: Profile }>("Profiler.stop", {}, 60_000);
      summaries.push(summarize(mix.name, profile, mapper, result.requests + result.errors));
    }
    return summaries;
  } finally {
    session?.close();
    await rt.stop();
  }
}
