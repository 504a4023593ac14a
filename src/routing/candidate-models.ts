import { modelShortcut } from "./model-shortcuts";

/** The contract's RoutingStrategy values this router uses. */
export type Strategy = "direct" | "fallback" | "auto";

/** One model the request may be served by, in the order tried. */
export type Candidate = {
  /** The catalog model. */
  modelId: string;
  /**
   * What the answer and the record name when this model serves: the id as the caller sent it (a shortcut's
   * suffix kept), except that an alias is named by the catalog id it stands for (as OpenRouter names its own id).
   */
  answerAs: string;
  /** A `:nitro` / `:floor` shortcut's sort. */
  sort?: "throughput" | "price";
};

export type Candidates = { candidates: Candidate[]; strategy: Strategy } | { unknown: string };

/** How the catalog is consulted: whether an id exists as it is, and what a requested id resolves to. */
export interface ModelLookup {
  has(id: string): boolean;
  /** The catalog model for an id as sent (an omitted id or `router/auto` is the default model). */
  resolve(id: string | undefined): string | undefined;
}

/**
 * The models a request may be served by: `model`, then each of `models` not already listed (the
 * contract's fallback list; without `model` its first entry is the model). Every id must resolve,
 * shortcuts included: an unknown id in `models` is the caller's mistake, answered, never skipped.
 */
export function candidateModels(model: string | undefined, models: readonly string[] | undefined, catalog: ModelLookup, autoId: string): Candidates {
  const sent = [...(model === undefined ? [] : [model]), ...(models ?? [])];
  const ids = sent.length ? [...new Set(sent)] : [undefined];
  const candidates: Candidate[] = [];
  for (const id of ids) {
    const shortcut = modelShortcut(id, (x) => catalog.has(x));
    const modelId = catalog.resolve(shortcut.modelId);
    if (modelId === undefined) return { unknown: id ?? autoId };
    if (candidates.some((c) => c.modelId === modelId && c.sort === shortcut.sort)) continue;
    // An alias (neither an id nor `router/auto`) is answered as the id it resolved to, with the shortcut's suffix.
    const alias = id !== undefined && id !== autoId && !catalog.has(shortcut.modelId!);
    const answerAs = alias ? modelId + id.slice(shortcut.modelId!.length) : (id ?? modelId);
    candidates.push({ modelId, answerAs, ...(shortcut.sort ? { sort: shortcut.sort } : {}) });
  }
  const strategy: Strategy = candidates.length > 1 ? "fallback" : ids[0] === undefined || ids[0] === autoId ? "auto" : "direct";
  return { candidates, strategy };
}
