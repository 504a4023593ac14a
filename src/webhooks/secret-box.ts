import { isolate } from "../isolate";

const encoder = new TextEncoder();
/** HKDF's salt and info: the derived key seals webhook endpoint secrets, and nothing else (the reasoning envelopes derive their own). */
const HKDF_SALT = encoder.encode("switchyard");
const HKDF_INFO = encoder.encode("webhook endpoint secret v1");
const IV_BYTES = 12;

const derivedKeys = isolate.slot("webhook secret keys", () => new Map<string, Promise<CryptoKey>>());

/**
 * Webhook endpoint secrets at rest. Unlike API keys (stored as hashes), a signing secret must be read back
 * to compute each delivery's HMAC, so it is stored sealed: AES-256-GCM under a key derived by HKDF-SHA-256
 * from the deployment's sealing secret (REASONING_SEAL_KEY; earlier ones open what they sealed), bound to
 * the endpoint's id as associated data, a random nonce each. A copy of D1 alone reveals no secret.
 */
export type SecretBox = { seal(plain: string, endpointId: string): Promise<string>; open(sealed: string, endpointId: string): Promise<string | null> };

/** The box over the deployment's sealing secrets (current first); null when none is set (endpoints cannot be made then). */
export function secretBox(secrets: readonly string[]): SecretBox | null {
  if (secrets.length === 0) return null;
  return {
    async seal(plain, endpointId) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const aad = encoder.encode(`webhook endpoint ${endpointId}`);
      const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad }, await keyOf(secrets[0]!), encoder.encode(plain)));
      return btoa(String.fromCharCode(...iv, ...sealed));
    },
    async open(text, endpointId) {
      let bytes: Uint8Array;
      try {
        bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
      } catch {
        return null;
      }
      const aad = encoder.encode(`webhook endpoint ${endpointId}`);
      for (const secret of secrets) {
        try {
          const plain = await crypto.subtle.decrypt(
            { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: aad },
            await keyOf(secret),
            bytes.subarray(IV_BYTES),
          );
          return new TextDecoder().decode(plain);
        } catch {
          // Not under this key: the next one, else unreadable.
        }
      }
      return null;
    },
  };
}

function keyOf(secret: string): Promise<CryptoKey> {
  const keys = derivedKeys.get();
  let key = keys.get(secret);
  if (!key) keys.set(secret, (key = derive(secret)));
  return key;
}

async function derive(secret: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: HKDF_INFO }, base, { name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]);
}
