import { decrypt, encrypt, IV_BYTES, purposeKey } from "../crypto/aes-gcm";

/** The derived key seals webhook endpoint secrets, and nothing else (the reasoning envelopes derive their own). */
const PURPOSE = "webhook endpoint secret v1";

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
      const { iv, data } = await encrypt(purposeKey(secrets[0]!, PURPOSE), plain, `webhook endpoint ${endpointId}`);
      return btoa(String.fromCharCode(...iv, ...data));
    },
    async open(text, endpointId) {
      let bytes: Uint8Array<ArrayBuffer>;
      try {
        bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
      } catch {
        return null;
      }
      const keys = secrets.map((secret) => purposeKey(secret, PURPOSE));
      return decrypt(keys, bytes.slice(0, IV_BYTES), bytes.slice(IV_BYTES), `webhook endpoint ${endpointId}`);
    },
  };
}
