import type { Preset, PresetVersion } from "../db/schema";
import { isolate } from "../isolate";

/**
 * Preset versions recently read from D1, per isolate, so a request naming a preset reads D1 at most
 * once, and usually not at all. Staleness: a save or deletion made in another isolate is seen here
 * within PRESET_CACHE_MS (`@preset/<slug>` may apply the previous latest version until then; a pinned
 * `@preset/<slug>@<n>` never changes); saves made through this isolate apply at once (`forgetPreset`).
 * A preset or version not found is never cached, so a new one is found at once.
 */
const MAX_PRESETS = 10_000;

type Found = { preset: Preset; version: PresetVersion };
/** Per account and slug (`<account>\0<slug>`): per version asked for (0: the latest), what was read and until when. */
const cache = isolate.slot("preset cache", () => new Map<string, Map<number, { found: Found; until: number }>>());

const keyOf = (accountId: string, slug: string) => `${accountId}\u0000${slug}`;

export async function cachedPresetVersion<Miss>(
  accountId: string,
  slug: string,
  version: number | null,
  ttlMs: number,
  load: () => Promise<Found | Miss>,
): Promise<Found | Miss> {
  const presets = cache.get();
  const key = keyOf(accountId, slug);
  const now = Date.now();
  const hit = presets.get(key)?.get(version ?? 0);
  if (hit && hit.until > now) return hit.found;
  const loaded = await load();
  if (isFound(loaded)) {
    if (!presets.has(key) && presets.size >= MAX_PRESETS) presets.delete(presets.keys().next().value!); // oldest first
    const versions = presets.get(key) ?? new Map<number, { found: Found; until: number }>();
    versions.set(version ?? 0, { found: loaded, until: now + ttlMs });
    presets.set(key, versions);
  }
  return loaded;
}

function isFound(x: unknown): x is Found {
  return typeof x === "object" && x !== null && "version" in x && (x as { version: unknown }).version !== null;
}

/** Forgets what this isolate read of the account's preset: the next request reads D1 (after a save or a deletion here). */
export function forgetPreset(accountId: string, slug: string): void {
  cache.get().delete(keyOf(accountId, slug));
}
