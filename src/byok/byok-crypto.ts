import type { ByokKeyring } from "../settings/byok";
import { decrypt, encrypt, purposeKey } from "../crypto/aes-gcm";

// The encryption of accounts' carrier keys at rest (docs/byok.md): AES-256-GCM (WebCrypto) under a key
// derived by HKDF-SHA-256 from a versioned deployment secret (`BYOK_ENCRYPTION_KEYS`), with the account id
// and the carrier slug as additional authenticated data.

/** The derived key encrypts carrier keys of this format, and nothing else. */
const PURPOSE = "byok carrier key v1";

/** What a row stores of one encrypted key. */
export type Sealed = { ciphertext: string; iv: string; keyVersion: number };

/** The data every ciphertext is bound to: a row moved to another account or carrier fails to decrypt. */
function boundTo(accountId: string, provider: string): string {
  return `byok\naccount ${accountId}\ncarrier ${provider}`;
}

/** Encrypts `plain` under the newest version of the keyring (null when the keyring is empty: storing is off). */
export async function sealCarrierKey(ring: ByokKeyring, accountId: string, provider: string, plain: string): Promise<Sealed | null> {
  const newest = ring[0];
  if (!newest) return null;
  const { iv, data } = await encrypt(purposeKey(newest.secret, PURPOSE), plain, boundTo(accountId, provider));
  return { ciphertext: toBase64(data), iv: toBase64(iv), keyVersion: newest.version };
}

/**
 * The plain key of a row, or null when it cannot be had: its version is no longer in the keyring, or
 * the ciphertext, its nonce or what it is bound to (account, carrier) was changed.
 */
export async function openCarrierKey(ring: ByokKeyring, accountId: string, provider: string, sealed: Sealed): Promise<string | null> {
  const version = ring.find((k) => k.version === sealed.keyVersion);
  if (!version) return null;
  try {
    return await decrypt([purposeKey(version.secret, PURPOSE)], fromBase64(sealed.iv), fromBase64(sealed.ciphertext), boundTo(accountId, provider));
  } catch {
    return null; // not base64: unreadable
  }
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
