import type { Catalog } from "../../catalog/catalog";

/** One row of the public catalog table: a model with the prices of the carrier tried first. */
export type ModelRow = {
  id: string;
  name: string;
  /** The provider's own ids the model also answers to (a search finds it by them). */
  aliases: readonly string[];
  contextLength: number;
  inputNano: number;
  outputNano: number;
  inputModalities: readonly string[];
  outputModalities: readonly string[];
  created: number;
  carriers: number;
};

/** Sort orders of the table: key → [label, direction]. */
export const SORTS = {
  name: ["Name (A–Z)", "ascending"],
  newest: ["Newest first", "descending"],
  context: ["Largest context", "descending"],
  input: ["Cheapest input", "ascending"],
  output: ["Cheapest output", "ascending"],
} as const;
export type SortKey = keyof typeof SORTS;

export function parseSort(value: string | undefined): SortKey {
  return value !== undefined && Object.hasOwn(SORTS, value) ? (value as SortKey) : "name";
}

export function modelRows(catalog: Catalog): ModelRow[] {
  return catalog.models.map((m) => {
    const endpoints = catalog.endpoints(m.id);
    const top = endpoints[0];
    return {
      id: m.id,
      name: m.name,
      aliases: m.aliases ?? [],
      contextLength: m.context_length,
      inputNano: top?.inputNano ?? 0,
      outputNano: top?.outputNano ?? 0,
      inputModalities: m.input_modalities,
      outputModalities: m.output_modalities,
      created: m.created,
      carriers: endpoints.length,
    };
  });
}

/** Rows whose id, name or an alias contains every word of `query` (case-insensitive), in the chosen order. */
export function selectRows(rows: readonly ModelRow[], query: string, sort: SortKey): ModelRow[] {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w.length > 0);
  const out = rows.filter((r) => words.every((w) => r.id.includes(w) || r.name.toLowerCase().includes(w) || r.aliases.some((a) => a.includes(w))));
  const byName = (a: ModelRow, b: ModelRow) => a.name.localeCompare(b.name, "en");
  const order: Record<SortKey, (a: ModelRow, b: ModelRow) => number> = {
    name: byName,
    newest: (a, b) => b.created - a.created || byName(a, b),
    context: (a, b) => b.contextLength - a.contextLength || byName(a, b),
    input: (a, b) => a.inputNano - b.inputNano || byName(a, b),
    output: (a, b) => a.outputNano - b.outputNano || byName(a, b),
  };
  return out.sort(order[sort]);
}
