import { existsSync, readFileSync } from "node:fs";
import { carrierSecretName } from "../src/catalog/carrier-secret.ts";

/** The carriers whose CARRIER_KEY_* `.dev.vars` sets (non-empty), by catalog slug. */
export function configuredCarriers(file: string, catalogFile: string): string[] {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const set = new Set(
    text
      .split("\n")
      .map((l) => /^\s*(CARRIER_KEY_[A-Z0-9_]+)\s*=\s*"?([^"\s]+)"?\s*$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => m[1]!),
  );
  const catalog = JSON.parse(readFileSync(catalogFile, "utf8")) as { providers: Array<{ slug: string }> };
  return catalog.providers.map((p) => p.slug).filter((slug) => set.has(carrierSecretName(slug)));
}
