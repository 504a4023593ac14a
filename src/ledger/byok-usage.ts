import type { SettleRequest } from "./contract";

/**
 * What the carrier charged the account's own key for a settled BYOK request (its record's `byokUpstreamNano`,
 * what the fee is computed from): the key's BYOK usage (docs/byok.md, Money); 0 for any other request.
 */
export function byokUpstreamNano(i: SettleRequest): number {
  return i.byok ? (i.record.byokUpstreamNano ?? 0) : 0;
}

/** What a settle counts against its key's limit: its cost, and what the carrier charged when the key counts BYOK usage. */
export function limitCostNano(i: SettleRequest, withByok: boolean): number {
  return i.costNano + (withByok ? byokUpstreamNano(i) : 0);
}
