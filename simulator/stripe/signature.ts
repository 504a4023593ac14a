// Stripe's webhook signature: `t=<unix s>,v1=<hex HMAC-SHA256 of "<t>.<payload>">`, keyed with the
// whole endpoint secret (`whsec_` included), as the SDKs verify it.
import { createHmac } from "node:crypto";

/** Signs a payload the way Stripe does: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<payload>" with the secret>`. */
export function stripeSignature(payload: string, secret: string, timestampS: number): string {
  const mac = createHmac("sha256", secret).update(`${timestampS}.${payload}`, "utf8").digest("hex");
  return `t=${timestampS},v1=${mac}`;
}
