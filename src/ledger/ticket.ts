import type { Slice } from "./slice";

/** One admitted request in an isolate: what backs it, until it settles (src/ledger/account-ledger.ts). */
export class Ticket {
  done = false;
  renewedAt: number;
  stopHeartbeat: (() => void) | undefined;
  constructor(
    readonly genId: string,
    readonly keyHash: string,
    readonly holdNano: number,
    /** The slice it was admitted from; null when the ledger admitted it on a hold of its own. */
    readonly slice: Slice | null,
    now: number,
    /** Its admission counted a free-model slot (given back should a priced endpoint serve it). */
    readonly freeSlot = false,
  ) {
    this.renewedAt = now;
  }
}
