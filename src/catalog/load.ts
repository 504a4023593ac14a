import bundled from "../../catalog.json";
import { Catalog } from "./catalog";
import type { Env } from "../env";

/** KV key holding the live catalog JSON (same shape as catalog.json). */
export const CATALOG_KV_KEY = "catalog:v1";
/** How long an isolate trusts its memo before it looks at KV again. */
const MEMO_TTL_MS = 60_000;

let memo: { catalog: Catalog; raw: string | null; at: number } | undefined;
let bundledCatalog: Catalog | undefined;

function fallback(): Catalog {
  return (bundledCatalog ??= Catalog.parse(bundled));
}

/**
 * The catalog for this request: the in-isolate memo, else KV, else the bundled catalog.json
 * (which then seeds KV). A KV value that fails validation is ignored, never served.
 */
export async function loadCatalog(env: Env, waitUntil?: (p: Promise<unknown>) => void): Promise<Catalog> {
  const now = Date.now();
  if (memo && now - memo.at < MEMO_TTL_MS) return memo.catalog;
  let raw: string | null = null;
  try {
    raw = await env.CATALOG.get(CATALOG_KV_KEY);
  } catch {
    raw = null; // KV unavailable: serve the memo or the bundled copy.
  }
  if (memo && raw !== null && raw === memo.raw) {
    memo.at = now;
    return memo.catalog;
  }
  let catalog: Catalog | undefined;
  if (raw !== null) {
    try {
      catalog = Catalog.parse(JSON.parse(raw));
    } catch {
      catalog = undefined;
    }
  }
  if (!catalog) {
    catalog = fallback();
    if (raw === null) waitUntil?.(env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(bundled)).catch(() => {}));
  }
  memo = { catalog, raw, at: now };
  return catalog;
}

/** Tests and admin use this to make the next request re-read KV. */
export function forgetCatalogMemo(): void {
  memo = undefined;
}
