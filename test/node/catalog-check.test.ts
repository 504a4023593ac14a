import { describe, it, expect } from "vitest";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { AGENT_DEFAULT_MODELS, checkCatalog } from "../../scripts/catalog-check.ts";

// `npm run catalog -- check`: the shipped catalog passes; each kind of mistake in a copy of it is named with
// the line to fix (the line the mistake was made on).
const original = readFileSync("catalog.json", "utf8");

/** The catalog with the `nth` (from 0) occurrence of `find` replaced, and the line it is on. */
function broken(find: string, replace: string, nth = 0): { text: string; line: number } {
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = original.indexOf(find, at + 1);
    if (at < 0) throw new Error(`"${find}" occurs fewer than ${nth + 1} times in catalog.json`);
  }
  return { text: original.slice(0, at) + replace + original.slice(at + find.length), line: original.slice(0, at).split("\n").length };
}

describe("catalog check", () => {
  it("the shipped catalog has no problem", () => {
    expect(checkCatalog(original)).toEqual([]);
  });

  it("a JSON syntax error: named where the parser stopped, the line after a missing comma", () => {
    const { text, line } = broken('"name": "Groq",', '"name": "Groq"');
    expect(checkCatalog(text)).toEqual([{ line: line + 1, path: "", message: expect.stringMatching(/^not valid JSON/) }]);
  });

  it.each<[string, string, string, number, RegExp]>([
    ["a duplicate model id", '"id": "openai/gpt-oss-20b:free"', '"id": "openai/gpt-oss-20b"', 0, /duplicate model openai\/gpt-oss-20b/],
    ["an endpoint's unknown carrier", '"provider": "groq"', '"provider": "grok"', 0, /unknown provider grok/],
    ["a :free model with a price", '"input_price_per_1m": 0,', '"input_price_per_1m": 0.1,', 0, /:free model must be priced 0/],
    ["a cache read dearer than the input", '"input_cache_read_per_1m": 0.03,', '"input_cache_read_per_1m": 0.5,', 0, /cache read .* costs more than the input/],
    ["a price with four decimals", '"input_price_per_1m": 0,', '"input_price_per_1m": 0.0001,', 1, /at most 3 decimals/],
    ["a price no one charges", '"output_price_per_1m": 15,', '"output_price_per_1m": 15000,', 0, /above \$1000: a typo\?/],
    ["a context off by orders of magnitude", '"context_length": 131072,', '"context_length": 1310720000,', 0, /outside 1024–10000000/],
    ["a carrier listed twice", '"slug": "fireworks"', '"slug": "groq"', 0, /duplicate carrier groq/],
    ["a base_url that is not https", '"base_url": "https://api.groq.com/openai/v1"', '"base_url": "http://api.groq.com/openai/v1"', 0, /https/],
    [
      "an alias that is another model's id",
      '"aliases": ["gpt-5"]',
      '"aliases": ["openai/gpt-5-mini"]',
      0,
      /openai\/gpt-5: alias openai\/gpt-5-mini is already the model openai\/gpt-5-mini/,
    ],
    [
      "an alias another model has",
      '"aliases": ["gpt-5-mini"]',
      '"aliases": ["gpt-5"]',
      0,
      /openai\/gpt-5-mini: alias gpt-5 is already an alias of openai\/gpt-5$/,
    ],
    ["an alias that is the router's own id", '"aliases": ["gpt-5"]', '"aliases": ["router/auto"]', 0, /alias router\/auto is already the router's auto model/],
    ["an alias in upper case", '"aliases": ["gpt-5"]', '"aliases": ["GPT-5"]', 0, /an alias is lower-case/],
    ["a long-prompt cache write no one charges", '"input_cache_write_1h_per_1m": 1\n', '"input_cache_write_1h_per_1m": 1000.5\n', 0, /above \$1000: a typo\?/],
    ["a source read on no date", '"read_on": "2026-11-27"', '"read_on": "yesterday"', 0, /date/],
    ["a carrier protocol not registered", '"protocol": "gemini"', '"protocol": "gemini-live"', 0, /"gemini-live" is not a carrier protocol this router speaks/],
  ])("%s: named on its line", (_name, find, replace, nth, message) => {
    const { text, line } = broken(find, replace, nth);
    const problems = checkCatalog(text);
    expect(problems.length).toBeGreaterThan(0);
    const named = problems.find((p) => message.test(p.message));
    expect(named, JSON.stringify(problems)).toBeDefined();
    expect(named!.line).toBe(line);
  });

  it("the agents' default models must resolve: an alias they use that no model has is named", () => {
    for (const name of AGENT_DEFAULT_MODELS.flatMap((a) => a.models)) {
      const { text } = broken(`"${name}"`, `"${name}-gone"`);
      expect(checkCatalog(text)).toEqual([
        expect.objectContaining({ path: "models", message: expect.stringMatching(new RegExp(`asks for ${name} by default`)) }),
      ]);
    }
  });

  it("a first-party model without sources is named on its id's line; a third-party one needs none", () => {
    const cat = JSON.parse(original) as { models: Array<{ id: string; sources?: unknown }> };
    const opus = cat.models.find((m) => m.id === "anthropic/claude-opus-5.5")!;
    delete opus.sources;
    const llama = cat.models.find((m) => m.id === "meta-llama/llama-3.1-8b-instruct")!;
    expect(llama.sources).toBeUndefined();
    const text = JSON.stringify(cat, null, 2);
    const line = text.slice(0, text.indexOf('"id": "anthropic/claude-opus-5.5"')).split("\n").length;
    expect(checkCatalog(text)).toEqual([
      {
        line,
        path: expect.stringMatching(/^models\[\d+\]\.id$/),
        message: expect.stringMatching(/anthropic\/claude-opus-5.5 is served by its own author's carrier: name the pages/),
      },
    ]);
  });

  it("the command exits 1 listing file:line, 0 on a good file; help exits 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "catalog-check-"));
    try {
      const bad = join(dir, "bad.json");
      const { text, line } = broken('"provider": "groq"', '"provider": "grok"');
      writeFileSync(bad, text);
      const run = (...args: string[]) =>
        promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/catalog.ts", ...args]).then(
          (r) => ({ code: 0, ...r }),
          (e: { code: number; stdout: string; stderr: string }) => e,
        );
      const failed = await run("check", bad);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`${bad}:${line}: models[`);
      const ok = await run("check");
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/catalog\.json: ok \(\d+ carriers, \d+ models, \d+ endpoints\)/);
      expect((await run("--help")).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
