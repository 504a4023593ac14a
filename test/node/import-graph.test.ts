import { describe, it, expect } from "vitest";
import { root, sourceFiles } from "./source-files";
import { readFileSync, statSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// Imports run one way (api → services → storage): no module of src/ may import itself back, even indirectly.

/** The src files a module imports at run time (type-only imports are erased, so they cannot form a cycle). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/gm)) {
    if (m[1]) continue;
    const base = resolve(dirname(file), m[2]!);
    const found = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((p) => existsSync(p) && statSync(p).isFile());
    if (found) out.push(found);
  }
  return out;
}

function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, runtimeImports(f)]));
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

describe("src import graph", () => {
  it("has no import cycles", () => {
    const files = sourceFiles(join(root, "src"));
    expect(files.length).toBeGreaterThan(50);
    expect(cycles(files).map((c) => c.join(" → "))).toEqual([]);
  });
});
