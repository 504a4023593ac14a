import type { PricedEndpoint } from "../catalog/catalog";
import { carrierSecret } from "../catalog/carrier-secret";
import type { ByokEntry } from "../byok/byok-store";
import { openCarrierKey } from "../byok/byok-crypto";
import type { ByokKeyring } from "../settings/byok";

/**
 * The account's own carrier keys as one request uses them (docs/byok.md): the rows read with its API key
 * (still encrypted), the deployment's keyring, the fee, and where a refusal of a key is noted.
 */
export type AccountKeys = {
  accountId: string;
  entries: readonly ByokEntry[];
  ring: ByokKeyring;
  /** The fee on a BYOK request, in thousandths of a percent of what the carrier charged. */
  feeMilli: number;
  /** The carrier refused the account's key (401/403/429), or it could not be decrypted: noted for the console, off the response path. */
  refused: (entry: ByokEntry, message: string) => void;
};

/** One way an endpoint may be called: with the account's key (`byok`) or the platform's (`byok` null). */
export type KeyTry = { byok: ByokEntry | null };

/** Carrier statuses that say the key itself was refused: only these move from the account's key to the platform's. */
export const KEY_REFUSALS: ReadonlySet<number> = new Set([401, 403, 429]);

/**
 * The keys an endpoint is tried with, in order: the platform's alone when the account has no key for its
 * carrier; the account's alone (`only`, or `first` without `allow_fallback`); else the account's, then
 * the platform's — tried only when the carrier refused the account's (KEY_REFUSALS).
 */
export function keyTries(account: AccountKeys | undefined, endpoint: PricedEndpoint): KeyTry[] {
  const entry = account?.entries.find((e) => e.provider === endpoint.provider);
  if (!entry) return [{ byok: null }];
  return entry.mode === "first" && entry.allowFallback ? [{ byok: entry }, { byok: null }] : [{ byok: entry }];
}

/**
 * The key itself: the platform's secret, or the account's key decrypted now, for this carrier only — bound
 * to the calling account, so a row of another account does not decrypt. Undefined: no such key.
 */
export async function keyFor(env: object, account: AccountKeys | undefined, endpoint: PricedEndpoint, t: KeyTry): Promise<string | undefined> {
  if (t.byok === null) return carrierSecret(env, endpoint.provider);
  if (!account) return undefined;
  return (await openCarrierKey(account.ring, account.accountId, t.byok.provider, t.byok.sealed)) ?? undefined;
}

/**
 * The fee (thousandths of a percent) an endpoint is held at when only the account's key may serve it
 * (`only`, or `first` without `allow_fallback`); undefined when the platform's key may serve it (held in full).
 */
export function byokHoldFee(account: AccountKeys | undefined, endpoint: PricedEndpoint): number | undefined {
  const tries = keyTries(account, endpoint);
  return tries.every((t) => t.byok !== null) ? account!.feeMilli : undefined;
}

/**
 * The fee (thousandths of a percent) when the account's key may serve the endpoint (first or only, with or
 * without fallback): a key counting BYOK usage in its limit holds the carrier's whole bill there; undefined when it may not.
 */
export function byokMayServeFee(account: AccountKeys | undefined, endpoint: PricedEndpoint): number | undefined {
  return keyTries(account, endpoint).some((t) => t.byok !== null) ? account!.feeMilli : undefined;
}

/** The request's copy of an endpoint it was served by with the account's key: charged the fee (src/request/charge.ts). */
export function byokServed(endpoint: PricedEndpoint, account: AccountKeys): PricedEndpoint {
  return { ...endpoint, byokFeeMilli: account.feeMilli };
}
