import type { Sealer } from "../protocols/inbound/caller-protocol";
import type { Settings } from "../settings";
import { decrypt, encrypt, IV_BYTES, purposeKey, TAG_BYTES } from "../crypto/aes-gcm";

/** The derived key seals reasoning envelopes of this version, and nothing else. */
const PURPOSE = "reasoning envelope v2";

/**
 * The account's sealer of reasoning envelopes (docs/api/responses.md): AES-256-GCM under a key derived
 * by HKDF-SHA-256 from the deployment's REASONING_SEAL_KEY, with the account id as associated data, so
 * an envelope is unreadable to its caller, and altered or another account's one fails to open. A fresh
 * random nonce per seal. Opening also tries REASONING_SEAL_KEYS_PREVIOUS (rotation). Null when no key
 * is set: the protocol then refuses what needs one (it never seals in the clear).
 */
export function reasoningSealer(s: Pick<Settings, "REASONING_SEAL_KEY" | "REASONING_SEAL_KEYS_PREVIOUS">, accountId: string): Sealer | null {
  if (s.REASONING_SEAL_KEY === undefined) return null;
  const secrets = [s.REASONING_SEAL_KEY, ...s.REASONING_SEAL_KEYS_PREVIOUS];
  const aad = `account ${accountId}`;
  return {
    async seal(plain) {
      const { iv, data } = await encrypt(purposeKey(secrets[0]!, PURPOSE), plain, aad);
      const out = new Uint8Array(IV_BYTES + data.byteLength);
      out.set(iv);
      out.set(data, IV_BYTES);
      return toBase64Url(out);
    },
    async open(token) {
      const bytes = fromBase64Url(token);
      if (bytes === null || bytes.length < IV_BYTES + TAG_BYTES) return null;
      return decrypt(
        secrets.map((secret) => purposeKey(secret, PURPOSE)),
        bytes.slice(0, IV_BYTES),
        bytes.slice(IV_BYTES),
        aad,
      );
    },
  };
}

/** Bytes as URL-safe base64 without padding (an envelope travels in JSON and is copied around by clients). */
function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The bytes of URL-safe base64; null when it is not that. */
function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
