import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { root } from "./source-files.ts";

// Every relative link in the README and docs/ lands somewhere that exists and says what the link names:
// pages are moved and sections renamed, and a link left behind points at nothing or at the wrong place.

/** The documents whose links are checked, relative to the root. */
function documents(): string[] {
  const inDir = (dir: string) =>
    readdirSync(join(root, dir))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `${dir}/${name}`);
  return ["README.md", ...inDir("docs"), ...inDir("docs/api"), "bench/RESULTS.md", ...inDir("bench/history"), "simulator/README.md"];
}

interface Section {
  anchor: string;
  level: number;
  /** The heading and what follows it up to the next heading of its level or above. */
  text: string;
}

interface Link {
  text: string;
  target: string;
  line: number;
}

/** The lines outside fenced code blocks, with inline code spans' backticks removed, by line number. */
function proseLines(markdown: string): { line: number; text: string }[] {
  let fenced = false;
  return markdown.split("\n").flatMap((text, i) => {
    if (/^\s*```/.test(text)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ line: i + 1, text }];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, … */
function slug(heading: string, seen: Map<string, number>): string {
  const base = heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

function sections(markdown: string): Section[] {
  const lines = proseLines(markdown);
  const seen = new Map<string, number>();
  const heads = lines.flatMap((l, index) => {
    const m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(l.text);
    return m ? [{ index, level: (m[1] ?? "").length, anchor: slug(m[2] ?? "", seen) }] : [];
  });
  return heads.map((h) => {
    const end = heads.find((next) => next.index > h.index && next.level <= h.level)?.index ?? lines.length;
    const text = lines
      .slice(h.index, end)
      .map((l) => l.text)
      .join("\n");
    return { anchor: h.anchor, level: h.level, text };
  });
}

function links(markdown: string): Link[] {
  return proseLines(markdown).flatMap(({ line, text }) =>
    [...text.replace(/`[^`]*`/g, (code) => code.replace(/[[\]()]/g, " ")).matchAll(/!?\[([^\]]*)\]\(([^)\s]+)\)/g)].map((m) => ({
      text: m[1] ?? "",
      target: m[2] ?? "",
      line,
    })),
  );
}

/** Words of a link's text, compared without case, markup or punctuation. */
const plain = (s: string) =>
  s
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*_"“”,.:;()]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();

/** A link whose text is the target's own name (a path, a file) or a direction names no section to look for. */
function namesNoSection(text: string, file: string): boolean {
  const t = plain(text);
  return t.includes("/") || t.endsWith(" md") || t === plain(basename(file, ".md")) || t === plain(basename(file)) || /^(above|below|here)$/.test(t);
}

/** Whether a section says what a link names: each of the link's words begins one of the section's ("limit" finds "limits"). */
function mentions(section: string, text: string): boolean {
  const words = plain(section).split(/[\s-]+/);
  return plain(text)
    .split(/[\s-]+/)
    .every((w) => words.some((s) => s.startsWith(w)));
}

/** What is wrong with each relative link of `doc`: a missing file, a missing anchor, or a section that does not say what the link names. */
function brokenLinks(doc: string, markdown = readFileSync(join(root, doc), "utf8")): string[] {
  return links(markdown).flatMap(({ text, target, line }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return []; // http:, https:, mailto: — not this repository's
    const where = `${doc}:${line} [${text}](${target})`;
    const [path = "", anchor] = target.split("#", 2);
    const file = path === "" ? doc : relative(root, join(root, dirname(doc), decodeURIComponent(path)));
    if (file.startsWith("..") || !existsSync(join(root, file))) return [`${where}: no file ${file}`];
    if (!file.endsWith(".md") || statSync(join(root, file)).isDirectory())
      return anchor === undefined ? [] : [`${where}: an anchor into a file that has no headings`];
    if (anchor === undefined) {
      const whole = readFileSync(join(root, file), "utf8");
      return namesNoSection(text, file) || mentions(whole, text) ? [] : [`${where}: ${file} does not mention "${text}"`];
    }
    const section = sections(readFileSync(join(root, file), "utf8")).find((s) => s.anchor === anchor);
    if (!section) return [`${where}: no heading #${anchor} in ${file}`];
    if (namesNoSection(text, file) || mentions(section.text, text)) return [];
    return [`${where}: the section #${anchor} of ${file} does not mention "${text}"`];
  });
}

/** What the README's first screen must show a new user, each by a line only that part would write. */
const FIRST_SCREEN = {
  run: "npm install && npm start",
  deploy: "npm run cloudflare:setup",
  test: "npm test",
  chat: "client.chat.completions.create(",
  "Claude Code": "ANTHROPIC_BASE_URL=",
  Codex: 'wire_api = "responses"',
};
const FIRST_SCREEN_LINES = 45;

/** What the README lacks: within 200 lines, its first screen shows how to run, call, deploy and test. */
function readmeShortfalls(readme: string): string[] {
  const lines = readme.replace(/\n$/, "").split("\n");
  const screen = lines.slice(0, FIRST_SCREEN_LINES).join("\n");
  return [
    ...(lines.length > 200 ? [`${lines.length} lines (at most 200)`] : []),
    ...Object.entries(FIRST_SCREEN).flatMap(([part, text]) => (screen.includes(text) ? [] : [`no ${part} (${text}) in its first ${FIRST_SCREEN_LINES} lines`])),
  ];
}

describe("the README", () => {
  it("is at most 200 lines, and its first screen shows run, call (chat, Claude Code, Codex), deploy and test", () => {
    expect(readmeShortfalls(readFileSync(join(root, "README.md"), "utf8"))).toEqual([]);
    expect(readmeShortfalls("# x\n" + "line\n".repeat(200))).toEqual([
      "201 lines (at most 200)",
      ...Object.entries(FIRST_SCREEN).map(([part, text]) => `no ${part} (${text}) in its first ${FIRST_SCREEN_LINES} lines`),
    ]);
  });
});

describe("documentation links", () => {
  it("every relative link in README.md, docs/, bench/RESULTS.md and simulator/README.md resolves, and lands where its words are", () => {
    const docs = documents();
    expect(docs.length).toBeGreaterThan(15);
    expect(docs.flatMap((doc) => brokenLinks(doc))).toEqual([]);
  });

  it("finds a missing file, a missing heading and a section that no longer says what the link names", () => {
    const markdown = readFileSync(join(root, "README.md"), "utf8");
    const anchors = sections(markdown).map((s) => s.anchor);
    expect(anchors).toContain("layout");
    expect(links("See [x](docs/none.md), `[not](a-link.md)` and [Layout](#layout).\n```\n[nor](this.md)\n```")).toEqual([
      { text: "x", target: "docs/none.md", line: 1 },
      { text: "Layout", target: "#layout", line: 1 },
    ]);
    expect(slug("Issue 26, continued: Miniflare's entry Worker", new Map())).toBe("issue-26-continued-miniflares-entry-worker");
    expect(
      brokenLinks("docs/x.md", "[a](none.md), [b](api.md#no-such), [Router fields](api.md#router-fields), [Sealing](api.md#router-fields), [c](../../x.md)"),
    ).toEqual([
      "docs/x.md:1 [a](none.md): no file docs/none.md",
      "docs/x.md:1 [b](api.md#no-such): no heading #no-such in docs/api.md",
      'docs/x.md:1 [Sealing](api.md#router-fields): the section #router-fields of docs/api.md does not mention "Sealing"',
      "docs/x.md:1 [c](../../x.md): no file ../x.md",
    ]);
    const seen = new Map<string, number>();
    expect([slug("Run", seen), slug("Run", seen)]).toEqual(["run", "run-1"]);
    expect(namesNoSection("docs/api.md", "docs/api.md")).toBe(true);
    expect(namesNoSection("README", "README.md")).toBe(true);
    expect(namesNoSection("Staleness", "README.md")).toBe(false);
    expect(mentions("## Rate limits on free models", "free-model rate limit")).toBe(true);
    expect(mentions("## The request path\n1. **auth** — the key", "Staleness")).toBe(false);
  });
});
