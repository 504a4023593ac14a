import { readFileSync } from "node:fs";
import { carrierSecretName } from "../src/catalog/carrier-secret.ts";

/** Local-only carrier keys (the simulator accepts any): one `CARRIER_KEY_<SLUG>` per catalog provider. */
export function carrierSecretBindings(catalogPath = new URL("../catalog.json", import.meta.url)): Record<string, string> {
  const catalog = JSON.parse(readFileSync(catalogPath, "utf8")) as { providers: { slug: string }[] };
  return Object.fromEntries(catalog.providers.map((p) => [carrierSecretName(p.slug), `sim-key-${p.slug}`]));
}
