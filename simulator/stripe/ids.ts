// Ids shaped like Stripe's: a type prefix and random base-62 characters (Stripe's own lengths).
import { randomInt } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

function random62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** `cs_test_` + 58, `req_` + 14, everything else prefix + 24 (e.g. `pi_3Mtw…`). */
export function newId(prefix: string): string {
  if (prefix === "cs_test") return `cs_test_${random62(58)}`;
  if (prefix === "req") return `req_${random62(14)}`;
  return `${prefix}_${random62(24)}`;
}

/** A secret suffix for a client secret (`pi_…_secret_…`). */
export function secretSuffix(): string {
  return random62(25);
}
