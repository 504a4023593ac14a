// Measures the token estimate's byte rule (⌈bytes ÷ 4⌉, src/relay/token-estimate.ts) against real
// tokenizers (OpenAI's o200k_base and cl100k_base, through gpt-tokenizer) on local text: English prose
// from Markdown documents, TypeScript/JavaScript source, JSON, and non-English messages. Offline.
//   npx tsx scripts/estimate-error.ts
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { encode as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { encode as cl100k } from "gpt-tokenizer/encoding/cl100k_base";

const BYTES_PER_TOKEN = 4; // as in src/relay/token-estimate.ts
const utf8 = (s: string) => Buffer.byteLength(s, "utf8");
/** Bytes of generated text as a carrier sends it in a chunk: JSON-escaped. */
const sent = (s: string) => utf8(JSON.stringify(s)) - 2;

function files(dir: string, ext: RegExp, limit: number): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (out.length >= limit) return;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (ext.test(name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** Plain paragraphs of Markdown: no code, tables, headings, lists of links or HTML. */
function prose(markdown: string): string[] {
  const paragraphs: string[] = [];
  let inCode = false;
  for (const block of markdown.split(/\n\s*\n/)) {
    const fences = (block.match(/^```/gm) ?? []).length;
    const wasInCode = inCode;
    if (fences % 2 === 1) inCode = !inCode;
    if (wasInCode || fences > 0) continue;
    const text = block.replace(/\s*\n\s*/g, " ").trim();
    if (text.length < 200 || /^[#|<>!\-*\d[]/.test(text) || (text.match(/[`|{}<>]/g) ?? []).length > 6) continue;
    paragraphs.push(text);
  }
  return paragraphs;
}

/** Quoted message strings of zod's locale files (non-English prose with placeholders). */
function localeStrings(locale: string): string {
  const source = readFileSync(`node_modules/zod/v4/locales/${locale}.js`, "utf8");
  return [...source.matchAll(/`([^`]{12,})`|"([^"\n]{12,})"/g)].map((m) => (m[1] ?? m[2])!).join("\n");
}

const markdown = [
  "README.md",
  "simulator/README.md",
  "node_modules/openai/README.md",
  "node_modules/undici/README.md",
  "node_modules/fast-check/README.md",
  "node_modules/semver/README.md",
  "node_modules/source-map/README.md",
  "node_modules/miniflare/README.md",
  "node_modules/picomatch/README.md",
];
const catalog = JSON.parse(readFileSync("catalog.json", "utf8")) as { models: unknown[] };
const corpora: Record<string, string> = {
  "English prose": markdown.flatMap((f) => prose(readFileSync(f, "utf8"))).join("\n\n"),
  "TypeScript (src/)": files("src", /\.tsx?$/, 200)
    .map((f) => readFileSync(f, "utf8"))
    .join("\n"),
  // Not llhttp/: generated base64 WebAssembly is data, not code.
  "JavaScript (undici)": files("node_modules/undici/lib", /\.js$/, 80)
    .filter((f) => !f.includes("llhttp"))
    .map((f) => readFileSync(f, "utf8"))
    .join("\n"),
  "JSON, compact (tool arguments)": catalog.models.map((m) => JSON.stringify(m)).join("\n"),
  "JSON, indented": readFileSync("catalog.json", "utf8"),
  "German / French / Spanish": ["de", "fr", "es"].map(localeStrings).join("\n"),
  Russian: localeStrings("ru"),
  "Chinese / Japanese": ["zh-CN", "ja"].map(localeStrings).join("\n"),
};

/** Consecutive pieces of about `size` bytes, cut at whitespace. */
function samples(text: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      const space = text.lastIndexOf(" ", end);
      if (space > start + size / 2) end = space;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out.filter((s) => s.trim().length > 0 && utf8(s) >= size / 2);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const fmt = (x: number) => x.toFixed(2);
const range = (r: number[]) => `${fmt(r[0]!)} · ${fmt(quantile(r, 0.5))} · ${fmt(r.at(-1)!)}`;
console.log("Estimate ÷ true tokens, min · median · max over the samples. Output: ⌈bytes as sent (JSON-escaped) ÷ 4⌉; prompt text: ⌈bytes ÷ 4⌉.\n");
console.log("| text | sample | samples | bytes per o200k token | output ÷ o200k | output ÷ cl100k | prompt text ÷ o200k | prompt text ÷ cl100k |");
console.log("|---|---:|---:|---:|---|---|---|---|");
for (const [name, text] of Object.entries(corpora)) {
  for (const size of [100, 1000, 10_000]) {
    const pieces = samples(text, size);
    if (pieces.length < 3) continue;
    const truth = { o200k: pieces.map((p) => Math.max(1, o200k(p).length)), cl100k: pieces.map((p) => Math.max(1, cl100k(p).length)) };
    const ratios = (bytes: (s: string) => number, counts: number[]) =>
      pieces.map((p, i) => Math.ceil(bytes(p) / BYTES_PER_TOKEN) / counts[i]!).sort((a, b) => a - b);
    const bytesPerToken = pieces.reduce((n, p) => n + utf8(p), 0) / truth.o200k.reduce((a, b) => a + b, 0);
    console.log(
      `| ${name} | ${size} B | ${pieces.length} | ${fmt(bytesPerToken)} | ${range(ratios(sent, truth.o200k))} | ${range(ratios(sent, truth.cl100k))} | ${range(ratios(utf8, truth.o200k))} | ${range(ratios(utf8, truth.cl100k))} |`,
    );
  }
}
