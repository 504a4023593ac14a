import { describe, it, expect } from "vitest";
import { root, sourceFiles } from "./source-files";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

// Logging goes through src/log-error.ts only (errors by place and kind, never the message: a driver error's
// message carries the query's parameters; each line at its level). Any other console call in src/ is a place that could leak.

/** console calls in code, skipping those inside template literals (the console's copy-paste examples). */
function consoleCalls(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const calls: string[] = [];
  for (const m of text.matchAll(/console\.\w+\(/g)) {
    const before = text.slice(0, m.index);
    const inTemplate = (before.match(/`/g)?.length ?? 0) % 2 === 1;
    if (!inTemplate) calls.push(`${relative(root, file)}:${before.split("\n").length}`);
  }
  return calls;
}

describe("logging in src/", () => {
  it("goes through src/log-error.ts only", () => {
    const calls = sourceFiles(join(root, "src")).flatMap(consoleCalls);
    expect(calls.filter((c) => !c.startsWith("src/log-error.ts:"))).toEqual([]);
    expect(calls.some((c) => c.startsWith("src/log-error.ts:"))).toBe(true);
  });
});
