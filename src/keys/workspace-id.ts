import { toHex } from "./api-key";

/**
 * The contract gives every key a `workspace_id`; Switchyard has no workspaces, so each account has one
 * implicit workspace whose id is a UUID derived from the account id (SHA-256, laid out as a version-8
 * UUID): stable, distinct per account, and it reveals nothing about the account id.
 */
export async function workspaceId(accountId: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`switchyard-workspace:${accountId}`)));
  const b = digest.slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80; // version 8 (custom)
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const h = toHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
