import { toHex } from "../keys/api-key";

/** Hex characters of the hash sent upstream (128 bits). */
const USER_HASH_CHARS = 32;

/**
 * What a carrier receives as `user`: hex SHA-256 of `<accountId>:<user>`, truncated. Stable for one
 * end user of one account (carriers can still isolate abuse per user), never the caller's raw value,
 * and the same `user` of two accounts maps to two values, so accounts can neither collide nor be linked.
 */
export async function hashedUser(accountId: string, user: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${accountId}:${user}`));
  return toHex(new Uint8Array(digest)).slice(0, USER_HASH_CHARS);
}
