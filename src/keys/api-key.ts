import { sha256Hex } from "./sha256";

/** API keys: `sk-sy-v1-` + 64 hex characters. Only the SHA-256 hash is ever stored. */
export const KEY_PREFIX = "sk-sy-v1-";
const KEY_PATTERN = /^sk-sy-v1-[0-9a-f]{64}$/;

export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return KEY_PREFIX + toHex(bytes);
}

export function looksLikeApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** SHA-256 of the key, hex: what is stored and looked up. Synchronous (src/keys/sha256.ts): it runs on every request. */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

/** The label shown for a key: its prefix, the first 3 secret characters and the last 3. */
export function maskApiKey(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 3)}...${key.slice(-3)}`;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
}

/** A random id with a prefix: `gen-…`, `acct_…`. */
export function randomId(prefix: string, bytes = 16): string {
  return prefix + toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}
