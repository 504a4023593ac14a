import type { ProviderPreferences } from "../request/provider-preferences";

/** Suffixes that ask for a sort on any catalog model id (OpenRouter's shortcuts). */
const SHORTCUTS = { ":nitro": "throughput", ":floor": "price" } as const;
type ShortcutSort = (typeof SHORTCUTS)[keyof typeof SHORTCUTS];

/**
 * `<model>:nitro` (sort by throughput) and `<model>:floor` (sort by price): the catalog model to serve
 * and the sort asked for. An id the catalog has as it is (a model really named so) is not a shortcut.
 */
export function modelShortcut<T extends string | undefined>(requested: T, inCatalog: (id: string) => boolean): { modelId: T | string; sort?: ShortcutSort } {
  if (requested === undefined || inCatalog(requested)) return { modelId: requested };
  for (const [suffix, sort] of Object.entries(SHORTCUTS) as [keyof typeof SHORTCUTS, ShortcutSort][])
    if (requested.endsWith(suffix)) return { modelId: requested.slice(0, -suffix.length), sort };
  return { modelId: requested };
}

/** The preferences with a shortcut's sort; a `sort` the caller set in `provider` wins. */
export function withShortcutSort(prefs: ProviderPreferences | null | undefined, sort: ShortcutSort | undefined): ProviderPreferences | null | undefined {
  if (sort === undefined || (prefs?.sort !== undefined && prefs?.sort !== null)) return prefs;
  return { ...prefs, sort };
}
