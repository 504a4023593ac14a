import type { ByokKeyring } from "../settings/byok";
import { isolate } from "../isolate";

// The encryption of accounts' carrier keys at rest (docs/byok.md): AES-256-GCM (WebCrypto) under a key
// derived by HKDF-SHA-256 from a versioned deployment secret (`BYOK_ENCRYPTION_KEYS`), with the account id
// and the carrier slug as additional authenticated data.

const encoder = new TextEncoder();
const HKDF_SALT = encoder.encode("switchyard");
/** The derived key encrypts carrier keys of this format, and nothing else. */
const HKDF_INFO = encoder.encode("byok carrier key v1");
const IV_BYTES = 12;

/** What a row stores of one encrypted key. */
export type Sealed = { ciphertext: string; iv: string; keyVersion: number };

/** Each secret's derived AES key, once per isolate (a few at most: the versions listed). */
const derivedKeys = isolate.slot("byok encryption keys", () => new Map<string, Promise<CryptoKey>>());

/** The data every ciphertext is bound to: a row moved to another account or carrier fails to decrypt. */
function boundTo(accountId: string, provider: string): Uint8Array {
  return encoder.encode(`byok\naccount ${accountId}\ncarrier ${provider}`);
}

/** Encrypts `plain` under the newest version of the keyring (null when the keyring is empty: storing is off). */
export async function sealCarrierKey(ring: ByokKeyring, accountId: string, provider: string, plain: string): Promise<Sealed | null> {
  const newest = ring[0];
  if (!newest) return null;
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const data = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: boundTo(accountId, provider) },
    await keyOf(newest.secret),
    encoder.encode(plain),
  );
  return { ciphertext: toBase64(new Uint8Array(data)), iv: toBase64(iv), keyVersion: newest.version };
}

/**
 * The plain key of a row, or null when it cannot be had: its version is no longer in the keyring, or
 * the ciphertext, its nonce or what it is bound to (account, carrier) was changed.
 */
export async function openCarrierKey(ring: ByokKeyring, accountId: string, provider: string, sealed: Sealed): Promise<string | null> {
  const version = ring.find((k) => k.version === sealed.keyVersion);
  if (!version) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(sealed.iv), additionalData: boundTo(accountId, provider) },
      await keyOf(version.secret),
      fromBase64(sealed.ciphertext),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
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

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
