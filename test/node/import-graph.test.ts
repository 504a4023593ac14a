import { describe, it, expect } from "vitest";
import { root, sourceFiles } from "./source-files";
import { readFileSync, statSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// Imports run one way (entry → api → serve → services → protocols → request → storage): no module of src/
// imports itself back, even indirectly, and none imports from a layer above its own.

/**
 * The src files a module imports: at run time only, or with its type-only imports too. Type-only imports
 * are erased at build time, so they cannot make a cycle run; but a type borrowed from a layer above ties a
 * lower layer to it all the same (a change there breaks the build here), so the layering counts them too.
 */
function imports(file: string, withTypes = false): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/gm)) {
    if (m[1] && !withTypes) continue;
    const base = resolve(dirname(file), m[2]!);
    const found = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((p) => existsSync(p) && statSync(p).isFile());
    if (found) out.push(found);
  }
  return out;
}

function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, imports(f)]));
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (f: string) => {
    state.set(f, "open");
    stack.push(f);
    for (const d of graph.get(f) ?? []) {
      if (state.get(d) === "open") found.push([...stack.slice(stack.indexOf(d)), d].map((p) => relative(root, p)));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return found;
}

/**
 * The layers of src/, top to bottom: a file may import (its types too) only from its own place or from a
 * lower layer.
 */
const LAYERS: string[][] = [
  ["index.ts"],
  ["app.ts", "scheduled.ts"],
  ["api", "admin", "console"], // HTTP: routes, middleware, pages
  ["serve"], // the request path, top to bottom
  ["relay"], // answers and streams back to the caller
  ["carriers"], // dispatch and calls to carriers
  ["generations", "health", "routing"],
  ["observability"], // generation records as OpenTelemetry spans (OTLP JSON and protobuf), their destinations
  ["payments"],
  ["ledger"],
  ["alerts"], // budget alerts: their events, webhook endpoints and deliveries (the ledger fires them)
  ["presets", "answer-cache"], // saved set-ups a request names (`@preset/<slug>`): their store, cache and merge; cached answers: their key, entries and store
  ["protocols"], // caller and carrier protocols: pure adapters
  ["request"], // the canonical request, answer and outcome
  ["media"], // what media parts hold: pages, seconds, pixels
  ["members"], // the people of an account: roles and what each may do, invitations, the audit log
  ["keys"],
  ["guardrails"], // the pure rules of what a key may use (their store is with the keys)
  ["byok"], // an account's own carrier keys: their encryption and store (docs/byok.md)
  ["db", "rate-limits"], // storage: D1's tables, the rate limiter Durable Object
  ["catalog"],
  ["http"],
  ["webhooks", "crypto"], // signing and sealing webhook secrets: pure, shared by every webhook we send; AES-GCM under derived keys
  ["settings.ts", "settings", "env.ts", "log-error.ts"],
  ["isolate.ts"],
];
/** Imports allowed to run upward (at most two, each with its reason where it is written). */
const ALLOWED_UPWARD: string[] = [];

/** A file's place: its folder under src/, or its own name at the top. */
function placeOf(relPath: string): string {
  const parts = relPath.replace(/^src\//, "").split("/");
  return parts.length > 1 ? parts[0]! : parts[0]!;
}

function rankOf(place: string): number {
  const rank = LAYERS.findIndex((layer) => layer.includes(place));
  if (rank < 0) throw new Error(`src/${place} is in no layer of test/node/import-graph.test.ts`);
  return rank;
}

/** The edges (from → to, paths relative to the root) that run from a lower layer to a higher one. */
function upward(edges: Array<[string, string]>): string[] {
  return edges.filter(([from, to]) => rankOf(placeOf(from)) > rankOf(placeOf(to))).map(([from, to]) => `${from} → ${to}`);
}

function edges(files: string[]): Array<[string, string]> {
  const src = join(root, "src");
  return files.flatMap((f) =>
    imports(f, true)
      .filter((to) => to.startsWith(src))
      .map((to): [string, string] => [relative(root, f), relative(root, to)]),
  );
}

describe("src import graph", () => {
  it("has no import cycles", () => {
    const files = sourceFiles(join(root, "src"));
    expect(files.length).toBeGreaterThan(50);
    expect(cycles(files).map((c) => c.join(" → "))).toEqual([]);
  });

  it("runs one way: no import, not even of a type, from a lower layer to a higher one (routing, relay, ledger, carriers and generations never reach api/)", () => {
    expect(upward(edges(sourceFiles(join(root, "src"))))).toEqual(ALLOWED_UPWARD);
  });

  it("every file of src/ has a layer", () => {
    for (const f of sourceFiles(join(root, "src"))) expect(() => rankOf(placeOf(relative(root, f)))).not.toThrow();
  });

  it("catches a deliberate violation", () => {
    expect(
      upward([
        ["src/routing/route-plan.ts", "src/api/chat-routes.ts"],
        ["src/api/chat-routes.ts", "src/routing/route-plan.ts"],
      ]),
    ).toEqual(["src/routing/route-plan.ts → src/api/chat-routes.ts"]);
  });
});
