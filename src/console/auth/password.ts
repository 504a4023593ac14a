import { fromBase64, toBase64 } from "../http/encoding";

/**
 * Password hashing: PBKDF2-HMAC-SHA256 through WebCrypto, a random 16-byte salt per account and
 * 100,000 iterations (workerd refuses more than 100,000), giving a 32-byte key. The parameters are
 * stored with each hash so they can be raised later without breaking existing sign-ins.
 */
export const PASSWORD_ALGORITHM = "pbkdf2-sha256";
export const PBKDF2_ITERATIONS = 100_000;
export const SALT_BYTES = 16;
const KEY_BITS = 256;

export const PASSWORD_MIN = 10;
/** An upper bound keeps a request from making us hash megabytes. */
export const PASSWORD_MAX = 256;

export type PasswordHash = { algorithm: string; iterations: number; salt: string; passwordHash: string };

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, material, KEY_BITS);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string): Promise<PasswordHash> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return { algorithm: PASSWORD_ALGORITHM, iterations: PBKDF2_ITERATIONS, salt: toBase64(salt), passwordHash: toBase64(hash) };
}

/** Checks a password against a stored hash in constant time. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  if (stored.algorithm !== PASSWORD_ALGORITHM) return false;
  const expected = fromBase64(stored.passwordHash);
  const actual = await derive(password, fromBase64(stored.salt), stored.iterations);
  return expected.length === actual.length && crypto.subtle.timingSafeEqual(expected, actual);
}

/**
 * Burns the same PBKDF2 work as a real check, for a sign-in whose email has no password: the
 * answer time then does not tell whether the email exists.
 */
export async function verifyNothing(password: string): Promise<false> {
  await derive(password, new Uint8Array(SALT_BYTES), PBKDF2_ITERATIONS);
  return false;
}
