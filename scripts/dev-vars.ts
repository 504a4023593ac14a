import { existsSync, readFileSync } from "node:fs";
import { carrierSecretName } from "../src/catalog/carrier-secret.ts";

/** The names of the variables `.dev.vars` sets (non-empty). */
export function devVarNames(file: string): Set<string> {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  return new Set(
    text
      .split("\n")
      .map((l) => /^\s*([A-Z][A-Z0-9_]*)\s*=\s*"?([^"\s]+)"?\s*$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => m[1]!),
  );
}

/** True when `.dev.vars` has both of Stripe's secrets: `npm start -- --real` then pays through real Stripe (its test mode, say). */
export function realStripe(file: string): boolean {
  const set = devVarNames(file);
  return set.has("STRIPE_SECRET_KEY") && set.has("STRIPE_WEBHOOK_SECRET");
}

/** The carriers whose CARRIER_KEY_* `.dev.vars` sets (non-empty), by catalog slug. */
export function configuredCarriers(file: string, catalogFile: string): string[] {
  const set = devVarNames(file);
  const catalog = JSON.parse(readFileSync(catalogFile, "utf8")) as { providers: Array<{ slug: string }> };
  return catalog.providers.map((p) => p.slug).filter((slug) => set.has(carrierSecretName(slug)));
}
