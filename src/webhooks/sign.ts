/**
 * Webhook signatures, as Stripe signs its webhooks: HMAC-SHA256, keyed by the endpoint's secret, over
 * `<timestamp>.<body>` (the timestamp in Unix seconds, the body the exact bytes sent), sent as
 * `Switchyard-Signature: t=<timestamp>,v1=<hex>`. A receiver recomputes it over the raw body and rejects a
 * timestamp older than its tolerance (a replayed delivery), docs/teams.md shows how. Pure: no storage, no
 * settings, so every webhook of the project (budget alerts; later, trace export) signs alike.
 */

export const SIGNATURE_HEADER = "Switchyard-Signature";
/** How old a signed timestamp a verifier accepts by default, seconds (Stripe's default too). */
export const DEFAULT_TOLERANCE_S = 300;

const encoder = new TextEncoder();

/** A new endpoint secret: `whsec_` and 32 random bytes as hex. Shown once; the signer needs it back, so it is stored sealed (secret-box.ts). */
export function newWebhookSecret(): string {
  return "whsec_" + toHex(crypto.getRandomValues(new Uint8Array(32)));
}

/** The hex HMAC-SHA256 of `<timestamp>.<body>` under the secret. */
export async function signature(secret: string, timestamp: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${timestamp}.${body}`))));
}

/** The signature header's value for a body sent at `timestamp` (Unix seconds). */
export async function signatureHeader(secret: string, timestamp: number, body: string): Promise<string> {
  return `t=${timestamp},v1=${await signature(secret, timestamp, body)}`;
}

/**
 * Whether a header signs this body under the secret, at a timestamp within `toleranceS` of `nowS`
 * (either side: a receiver's clock may run behind). Compares in constant time; any `v1` may match (a
 * sender rotating secrets may send two).
 */
export async function verifySignature(secret: string, header: string, body: string, nowS: number, toleranceS = DEFAULT_TOLERANCE_S): Promise<boolean> {
  const parts = header.split(",").map((p) => p.trim().split("="));
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isSafeInteger(t) || Math.abs(nowS - t) > toleranceS) return false;
  const expected = await signature(secret, t, body);
  let ok = false;
  for (const [k, v] of parts) if (k === "v1" && v !== undefined && sameText(v, expected)) ok = true;
  return ok;
}

function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
