import { isolate } from "../isolate";

// AES-256-GCM (WebCrypto) under keys derived from deployment secrets, for what Switchyard must read back yet
// never keep in clear: reasoning envelopes, accounts' carrier keys (BYOK), the signing secrets and headers of
// webhook endpoints and trace destinations. Each purpose derives its own key (HKDF-SHA-256, salt
// "switchyard", `info` naming the purpose and its version), and each sealer binds what it seals to what it
// belongs to (associated data), so a copy moved to another account, row or purpose fails to open. Each
// caller keeps its own storage format (nonce and ciphertext in one string or two).

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HKDF_SALT = encoder.encode("switchyard");
/** AES-GCM's nonce (random per seal) and tag. */
export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** Every derived key, once per isolate: a handful at most (each purpose's current secret and those kept for rotation). */
const derivedKeys = isolate.slot("derived AES-GCM keys", () => new Map<string, Promise<CryptoKey>>());

/** The AES-256-GCM key of one purpose (`info`) from one deployment secret, derived on first use in the isolate. */
export function purposeKey(secret: string, info: string): Promise<CryptoKey> {
  const keys = derivedKeys.get();
  const id = `${info}\n${secret}`;
  let key = keys.get(id);
  if (!key) keys.set(id, (key = derive(secret, info)));
  return key;
}

async function derive(secret: string, info: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: encoder.encode(info) },
    base,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** Encrypts `plain` under `key` with a fresh random nonce, bound to `aad` (what it belongs to): the nonce, and the ciphertext with its tag. */
export async function encrypt(key: Promise<CryptoKey>, plain: string, aad: string): Promise<{ iv: Uint8Array<ArrayBuffer>; data: Uint8Array<ArrayBuffer> }> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const data = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(aad) }, await key, encoder.encode(plain)));
  return { iv, data };
}

/** The plain text under the first of `keys` that opens it; null when none does (another key, altered, or bound to something else). */
export async function decrypt(
  keys: ReadonlyArray<Promise<CryptoKey>>,
  iv: Uint8Array<ArrayBuffer>,
  data: Uint8Array<ArrayBuffer>,
  aad: string,
): Promise<string | null> {
  for (const key of keys) {
    try {
      return decoder.decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(aad) }, await key, data));
    } catch {
      // Not under this key: the next one, else refused.
    }
  }
  return null;
}
