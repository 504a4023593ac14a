import bundled from "../../catalog.json";
import { Catalog } from "./catalog";
import { isolate } from "../isolate";
import { carrierSecret } from "./carrier-secret";

/**
 * What the catalog reads of the Worker's environment: its KV namespace, and the carriers' secrets (any other
 * binding is not looked at; `Env` is this and more).
 */
export type CatalogEnv = { CATALOG: KVNamespace };

/** KV key holding the live catalog JSON (same shape as catalog.json). */
export const CATALOG_KV_KEY = "catalog:v1";
/** How long an isolate trusts its memo before it looks at KV again. */
const MEMO_TTL_MS = 60_000;
/** After a failed KV read, how soon the isolate tries KV again (serving what it has meanwhile). */
const KV_RETRY_MS = 5_000;

type Memo = {
  /** The catalog served now; `raw` is the KV text it came from (null: the bundled copy); `at` when KV was last asked. */
  served?: { catalog: Catalog; raw: string | null; at: number };
  bundled?: Catalog;
};
const catalogMemo = isolate.slot<Memo>("catalog memo", () => ({}));

/** Whether a carrier's key is set in this Worker: only those carriers serve (and their models are listed). */
function configuredIn(env: CatalogEnv): (slug: string) => boolean {
  return (slug) => carrierSecret(env, slug) !== undefined;
}

function fallback(env: CatalogEnv, protocols: ReadonlySet<string>): Catalog {
  const m = catalogMemo.get();
  return (m.bundled ??= Catalog.parse(bundled, configuredIn(env), protocols));
}

/**
 * The catalog for this request: the in-isolate memo, else KV. The bundled catalog.json is served when
 * KV has no catalog, and then seeds KV — only then: a KV read error or an invalid KV value keeps
 * serving the last good catalog (the bundled one if there is none yet) and writes nothing, so a fault
 * can never put the bundled prices over the live ones. `protocols`: the carrier protocols registered
 * (src/protocols/outbound/index.ts, handed down by the callers above the protocols' layer): a catalog
 * naming another is invalid.
 */
export async function loadCatalog(env: CatalogEnv, protocols: ReadonlySet<string>, waitUntil?: (p: Promise<unknown>) => void): Promise<Catalog> {
  const state = catalogMemo.get();
  let memo = state.served;
  const now = Date.now();
  if (memo && now - memo.at < MEMO_TTL_MS) return memo.catalog;
  let raw: string | null;
  try {
    raw = await env.CATALOG.get(CATALOG_KV_KEY);
  } catch {
    // KV unavailable: what we have stays, and KV is asked again in a few seconds.
    memo = state.served = { catalog: memo?.catalog ?? fallback(env, protocols), raw: memo?.raw ?? null, at: now - MEMO_TTL_MS + KV_RETRY_MS };
    return memo.catalog;
  }
  if (raw === null) {
    // No catalog in KV yet: the bundled one is served and seeds it.
    waitUntil?.(env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(bundled)).catch(() => {}));
    memo = state.served = { catalog: fallback(env, protocols), raw: null, at: now };
    return memo.catalog;
  }
  if (memo && raw === memo.raw) {
    memo.at = now;
    return memo.catalog;
  }
  let catalog: Catalog | undefined;
  try {
    catalog = Catalog.parse(JSON.parse(raw), configuredIn(env), protocols);
  } catch {
    catalog = undefined; // invalid: never served
  }
  memo = state.served = catalog ? { catalog, raw, at: now } : { catalog: memo?.catalog ?? fallback(env, protocols), raw: memo?.raw ?? null, at: now };
  return memo.catalog;
}

/** Tests and admin use this to make the next request re-read KV. */
export function forgetCatalogMemo(): void {
  catalogMemo.reset();
}
