import type { Sealer } from "../protocols/inbound/caller-protocol";
import type { Settings } from "../settings";
import { isolate } from "../isolate";

const encoder = new TextEncoder();
/** HKDF's salt and info: the derived key seals reasoning envelopes of this version, and nothing else. */
const HKDF_SALT = encoder.encode("switchyard");
const HKDF_INFO = encoder.encode("reasoning envelope v2");
/** AES-GCM's nonce (random per seal) and tag. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Each secret's derived AES key, once per isolate (a few secrets at most: the current one and those kept for rotation). */
const derivedKeys = isolate.slot("reasoning seal keys", () => new Map<string, Promise<CryptoKey>>());

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
  const aad = encoder.encode(`account ${accountId}`);
  return {
    async seal(plain) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad }, await keyOf(secrets[0]!), encoder.encode(plain));
      const out = new Uint8Array(IV_BYTES + sealed.byteLength);
      out.set(iv);
      out.set(new Uint8Array(sealed), IV_BYTES);
      return toBase64Url(out);
    },
    async open(token) {
      const bytes = fromBase64Url(token);
      if (bytes === null || bytes.length < IV_BYTES + TAG_BYTES) return null;
      const iv = bytes.subarray(0, IV_BYTES);
      const data = bytes.subarray(IV_BYTES);
      for (const secret of secrets) {
        try {
          const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: aad }, await keyOf(secret), data);
          return new TextDecoder().decode(plain);
        } catch {
          // Not under this key (or altered, or another account's): the next key, else refused.
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
