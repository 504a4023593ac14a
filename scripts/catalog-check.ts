import { parseDocument } from "yaml";
import { catalogSchema, type CatalogFile } from "../src/catalog/schema.ts";
import { unregisteredProtocols } from "../src/catalog/catalog.ts";
import { CARRIER_PROTOCOL_NAMES } from "../src/protocols/outbound/index.ts";

/** One problem of a catalog file: the line to fix (1-based), where in the document, and what is wrong. */
export type Problem = { line: number; path: string; message: string };

/** Bounds outside which a figure is a typo, not a real offer (USD per 1M tokens; tokens). */
export const PLAUSIBLE = { maxPricePer1m: 1000, minContext: 1024, maxContext: 10_000_000 } as const;

type Path = Array<string | number>;
/** The per-token prices an endpoint (and its long-context prices) may set. */
const PRICE_FIELDS = [
  "input_price_per_1m",
  "output_price_per_1m",
  "input_cache_read_per_1m",
  "input_cache_write_per_1m",
  "input_cache_write_1h_per_1m",
] as const;
type PriceField = (typeof PRICE_FIELDS)[number];

/**
 * The models the pinned coding agents ask for when the user names none (package.json's devDependencies),
 * by the names they send: each must resolve to a catalog model, by id or alias (docs/agents.md).
 */
export const AGENT_DEFAULT_MODELS: ReadonlyArray<{ agent: string; models: readonly string[] }> = [
  { agent: "Claude Code 2.1.332", models: ["claude-opus-5-5", "claude-haiku-4-5-20251001"] },
  { agent: "Codex 0.169.0", models: ["gpt-6.1-sol"] },
];

/** Each model author's own carrier: a model served there is first-party, and must name the pages its prices were read from. */
export const FIRST_PARTY_CARRIERS: Readonly<Record<string, string>> = { anthropic: "anthropic", openai: "openai", google: "google-ai-studio" };

/**
 * First-party models catalogued before sources were recorded whose prices have not yet been re-read from the
 * provider's own page (docs/catalog.md, Updating). The list only shrinks: a model leaves it when its sources are added.
 */
export const AWAITING_SOURCES: ReadonlySet<string> = new Set([
  "openai/gpt-5",
  "openai/gpt-5-mini",
  "openai/text-embedding-3-small",
  "google/gemini-2.5-pro",
  "google/gemini-2.5-flash",
  "google/gemini-embedding-001",
]);

/**
 * Checks a catalog file's text: JSON syntax, the schema the service loads it with (src/catalog/schema.ts:
 * carriers of every endpoint exist, ids unique, `:free` priced 0, prices exact to the nano-USD…), and what
 * only a person would get wrong: duplicate carriers, prices or contexts out of any plausible range, a cache
 * read dearer than the input, a completion cap above the context — and what the project promises: the
 * agents' default models resolve, every first-party model names its sources. Each problem names its line.
 */
export function checkCatalog(text: string): Problem[] {
  const doc = parseDocument(text, { prettyErrors: false });
  const lineOf = (offset: number) => text.slice(0, offset).split("\n").length;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    // Where the parser stopped: at the first token after the mistake (a missing comma shows on the next line).
    const message = err instanceof Error ? err.message : String(err);
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : (doc.errors[0]?.pos[0] ?? 0);
    return [{ line: lineOf(offset), path: "", message: `not valid JSON: ${message}` }];
  }
  /** The line of the deepest part of `path` the file has (a missing field: its object's line). */
  const lineAt = (path: Path): number => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range) return lineOf(node.range[0]);
    }
    return 1;
  };
  const problems: Problem[] = [];
  const add = (path: Path, message: string) => problems.push({ line: lineAt(path), path: pathText(path), message });

  const parsed = catalogSchema.safeParse(json);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      add(
        issue.path.filter((p): p is string | number => typeof p !== "symbol"),
        issue.message,
      );
    }
    return sortByLine(problems);
  }
  for (const u of unregisteredProtocols(parsed.data, CARRIER_PROTOCOL_NAMES))
    add(
      u.path,
      `"${u.name}" is not a carrier protocol this router speaks (${[...CARRIER_PROTOCOL_NAMES].join(", ")}): a new one is a folder under src/protocols/outbound/ and a line in its index.ts`,
    );
  plausibility(parsed.data, add);
  promises(parsed.data, add);
  return sortByLine(problems);
}

/** The agents' default models resolve (by id or alias); each first-party model says where its prices were read, and when. */
function promises(cat: CatalogFile, add: (path: Path, message: string) => void): void {
  const names = new Set(cat.models.flatMap((m) => [m.id, ...(m.aliases ?? [])]));
  for (const { agent, models } of AGENT_DEFAULT_MODELS)
    for (const name of models) if (!names.has(name)) add(["models"], `${agent} asks for ${name} by default, and no model has it as its id or an alias`);
  cat.models.forEach((m, i) => {
    const carrier = FIRST_PARTY_CARRIERS[m.id.split("/")[0]!];
    if (carrier !== undefined && m.endpoints.some((e) => e.provider === carrier) && !m.sources?.length && !AWAITING_SOURCES.has(m.id))
      add(["models", i, "id"], `${m.id} is served by its own author's carrier: name the pages its prices were read from (sources: [{url, read_on}])`);
  });
}

function plausibility(cat: CatalogFile, add: (path: Path, message: string) => void): void {
  const used = new Set(cat.models.flatMap((m) => m.endpoints.map((e) => e.provider)));
  cat.providers.forEach((p, i) => {
    if (!used.has(p.slug)) add(["providers", i, "slug"], `carrier ${p.slug} serves no model: add an endpoint for it or remove it`);
  });
  cat.models.forEach((m, i) => {
    const at: Path = ["models", i];
    context(m.context_length, [...at, "context_length"], add);
    const carriers = new Set<string>();
    m.endpoints.forEach((e, j) => {
      const ep: Path = [...at, "endpoints", j];
      if (carriers.has(e.provider)) add([...ep, "provider"], `${m.id}: carrier ${e.provider} is listed twice`);
      carriers.add(e.provider);
      context(e.context_length, [...ep, "context_length"], add);
      if (e.context_length > m.context_length)
        add([...ep, "context_length"], `${m.id} at ${e.provider}: context ${e.context_length} is above the model's ${m.context_length}`);
      if (e.max_completion_tokens !== null && e.max_completion_tokens > e.context_length)
        add(
          [...ep, "max_completion_tokens"],
          `${m.id} at ${e.provider}: max_completion_tokens ${e.max_completion_tokens} is above its context ${e.context_length}`,
        );
      const implausible = (prices: Partial<Record<PriceField, number>>, path: Path) => {
        for (const field of PRICE_FIELDS) {
          const price = prices[field];
          if (price !== undefined && price > PLAUSIBLE.maxPricePer1m)
            add([...path, field], `${m.id} at ${e.provider}: $${price} per 1M tokens is above $${PLAUSIBLE.maxPricePer1m}: a typo?`);
        }
      };
      implausible(e, ep);
      if (e.input_cache_read_per_1m !== undefined && e.input_cache_read_per_1m > e.input_price_per_1m)
        add(
          [...ep, "input_cache_read_per_1m"],
          `${m.id} at ${e.provider}: a cache read ($${e.input_cache_read_per_1m}/1M) costs more than the input it replaces ($${e.input_price_per_1m}/1M)`,
        );
      const lc = e.long_context;
      if (lc) {
        if (lc.above_prompt_tokens >= e.context_length)
          add([...ep, "long_context", "above_prompt_tokens"], `${m.id} at ${e.provider}: the long-context threshold is not below the context`);
        if (lc.input_price_per_1m < e.input_price_per_1m)
          add([...ep, "long_context", "input_price_per_1m"], `${m.id} at ${e.provider}: long-context input is cheaper than the base input price`);
        implausible(lc, [...ep, "long_context"]);
        if (lc.input_cache_read_per_1m !== undefined && lc.input_cache_read_per_1m > lc.input_price_per_1m)
          add([...ep, "long_context", "input_cache_read_per_1m"], `${m.id} at ${e.provider}: a long-context cache read costs more than the long-context input`);
      }
    });
  });
}

function context(n: number, path: Path, add: (path: Path, message: string) => void): void {
  if (n < PLAUSIBLE.minContext || n > PLAUSIBLE.maxContext)
    add(path, `context ${n} tokens is outside ${PLAUSIBLE.minContext}–${PLAUSIBLE.maxContext}: a typo?`);
}

function pathText(path: Path): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

function sortByLine(problems: Problem[]): Problem[] {
  return problems.sort((a, b) => a.line - b.line);
}
