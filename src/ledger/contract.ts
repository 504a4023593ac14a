import type { NewGeneration } from "../db/schema";
import type { KeyUsage } from "../keys/key-usage";
import type { LimitReset } from "../keys/usage-windows";
import type { FreeLimitHit, FreeLimits } from "./free-limits";
import type { AlertRules, FiredAlert } from "../alerts/events";

// The account ledger's contract: every request and result that crosses the Durable Object's RPC boundary,
// and the RPC interface itself. Callers (the Worker's routes, the isolate's AccountLedger, payments, the
// records queue, the console) depend on this file; only the wrangler export, the binding and tests that reach
// inside the object need the class (src/ledger/ledger-object.ts, which implements it over the modules of src/ledger/object/).

export type { KeyUsage };

export type AdmitRequest = {
  genId: string;
  keyHash: string;
  /** Key credit limit in nano-USD, null when the key has none. */
  limitNano: number | null;
  /** The limit's reset period: it applies to the usage of the current UTC day, week or month; null/absent = to all usage. */
  limitReset?: LimitReset | null;
  /** The key's limit counts its BYOK usage too (include_byok_in_limit): what carriers charged the account's own keys for its requests. */
  includeByok?: boolean;
  /** Worst-case cost held until settle, as the request stands; 0 for free models. */
  holdNano: number;
  /**
   * What the request reserves of a key counting BYOK usage, when that differs from `holdNano` (an endpoint the account's
   * own carrier key may serve: the carrier's whole bill and the fee on it, where the balance holds the fee alone). The
   * key's remaining limit must cover all of it (no completion cap is lowered for it); absent: `holdNano`.
   */
  keyHoldNano?: number;
  /**
   * The least hold that still serves the request (its caller's completion cap, else one completion token
   * at its cheapest endpoint): when `holdNano` cannot be paid but this can, the hold granted is what the
   * key and the balance can pay, and the router lowers the request's completion cap to fit it. Absent:
   * `holdNano` (nothing to lower).
   */
  minHoldNano?: number;
  /** Whether the model costs anything: only paid models need a positive balance. */
  paid: boolean;
  /** The record written (cost 0) should the request die without settling and its hold expire. */
  abandoned: NewGeneration;
  /**
   * What the asking isolate has of this key that the ledger cannot see yet: holds of its requests
   * admitted from a slice (before the key had a limit) and costs of settles not yet stored. Counted
   * against the key's limit.
   */
  unseenNano?: number;
  /**
   * Set when the request's plan has a free endpoint: it is counted against the account's free-model
   * rate limits (a plan mixing free and priced endpoints too; docs/api.md, Rate limits on free models).
   */
  free?: FreeLimits;
  /** The asking isolate's settles still gathering, applied first (`settleBatch`): the admission sees the requests that ended. */
  settle?: CarriedSettles;
};

/** A settle batch riding on an admission or a lease. */
export type CarriedSettles = { items: SettleRequest[]; slices: SliceReport[] };
/**
 * Which of the plan's endpoints the request may use (absent = all): `free_only` when the priced ones
 * cannot be paid for (the balance is spent) but a free slot was counted; `paid_only` when the free-model
 * limit is reached but the balance pays for the priced ones.
 */
export type AdmitRoute = "free_only" | "paid_only";
export type AdmitResult =
  | {
      ok: true;
      route?: AdmitRoute;
      /** The hold granted: `holdNano`, or less (not below `minHoldNano`) when that is what can be paid; 0 for free. */ holdNano: number;
    }
  | {
      ok: false;
      reason: "balance" | "key_limit";
      /** What the key's remaining limit and the balance could pay (≤ 0: nothing). */ availableNano: number;
      /** A balance refusal: what holds and slices of requests in flight reserve of the balance (the 402 says when they, not the balance, ran out). */
      heldNano?: number;
    }
  | ({ ok: false; reason: "rate_limit" } & FreeLimitHit);

export type SettleRequest = {
  genId: string;
  keyHash: string;
  /** What to debit, nano-USD; 0 for a failed request. */
  costNano: number;
  /** The generation record, stored with the debit in one transaction and copied to D1 later. */
  record: NewGeneration;
  /** The slice (lease) the request was admitted from (its cost leaves the slice), or none (its own hold, if any). */
  leaseId?: string;
  /** Its admission counted a free-model slot, but a priced endpoint served it: the slot is given back. */
  releaseFreeSlot?: boolean;
  /**
   * The key's limit as the request authenticated it (absent: no limit): its budget alerts are percents of it,
   * in its window, of the usage it counts — with BYOK usage when the key includes it (`includeByok`).
   */
  keyLimit?: { nano: number; reset: LimitReset | null; includeByok?: true };
  /**
   * Served with the account's own carrier key: the BYOK fee, all of `costNano`, waived while the account's
   * BYOK requests of the UTC month are within BYOK_FREE_REQUESTS_PER_MONTH (docs/byok.md).
   */
  byok?: true;
};

/** What an isolate tells the ledger about one of its slices. */
export type SliceReport = {
  leaseId: string;
  /** Requests the isolate admitted from the slice so far (it only grows). */
  admitted: number;
  /** The isolate admits no more from it: once every admitted request settled, its rest returns to the balance. */
  release?: boolean;
  /**
   * What the isolate gave back of it so far (cumulative): the part no request of it holds, returned to the
   * balance when the isolate retired it with requests still in flight, so money waiting for them is not
   * locked away from the account's next admissions.
   */
  returnedNano?: number;
};

export type LeaseRequest = {
  leaseId: string;
  /** The hold of the request asking: granted even when it exceeds the available balance (docs/money.md, Overdraft bound). 0 = a free model's request. */
  holdNano: number;
  /** How much the isolate would like to spend locally. */
  wantNano: number;
  /** The isolate's settles still gathering, and the release of the slice this one replaces: applied first. */
  settle?: CarriedSettles;
};
export type LeaseResult = { ok: true; grantNano: number } | { ok: false; reason: "balance"; availableNano: number };

export type RenewRequest = { slices: SliceReport[]; holds: string[] };
/** Slices and holds that were no longer there (expired): the isolate stops admitting from such a slice. */
export type RenewResult = { gone: string[] };

export type GrantRequest = {
  /** Idempotency id: a grant with an id seen before changes nothing (`admin:<key>`, `payment:<pay_id>`, …). */
  grantId: string;
  amountNano: number;
  /** Who granted it: `admin`, `console-payment`, `account-created`. */
  source: string;
};
export type GrantResult = { applied: boolean; totals: Totals };
export type GrantsSummary = { count: number; totalNano: number; reversals: number; reversedNano: number };

export type ReverseRequest = {
  /** The grant it takes credits back from; it must exist. One reversal per grant, set to a total (`payment:<id>`). */
  grantId: string;
  /** What is taken back of the grant in all, now (Stripe's refunds and withheld disputes): raised or lowered to it, at most the grant. */
  amountNano: number;
  /** When the state this figure comes from was read (Unix ms): a reading older than the one stored changes nothing. */
  observedAt: number;
  source: string;
};
/** changeNano: credits taken back by this call (negative: given back); stale: an older reading than the stored one, nothing changed. */
export type ReverseResult = { changeNano: number; reversedNano: number; stale: boolean; totals: Totals };
export type GrantRecord = { grantId: string; amountNano: number; source: string; createdAt: number };

export type Totals = { creditsNano: number; usageNano: number; heldNano: number; granted: boolean };

export type OpenHold = {
  id: string;
  kind: "request" | "slice";
  amountNano: number;
  createdAt: number;
  renewedAt: number;
  admitted: number | null;
  settled: number | null;
  released: boolean;
};
/** A slice that ended with admitted requests it never saw settle (`expired`: its isolate died; `released`: settles never came). */
export type EndedSlice = { leaseId: string; admitted: number; settled: number; endedAt: number; ended: "expired" | "released" };
export type SliceAudit = { unsettledAdmissions: number; expiredSlices: number; recent: EndedSlice[] };

/**
 * The ledger's RPC methods as the Durable Object implements them: each body is synchronous SQL, hence
 * atomic per account (the modules of src/ledger/object/ say what each does).
 */
export interface LedgerRpc {
  /** Admits a request when its key's remaining limit and the balance can pay at least its least hold. */
  admit(req: AdmitRequest): AdmitResult;
  /** Grants an isolate a slice of the balance to admit requests locally. */
  lease(req: LeaseRequest): LeaseResult;
  /** Keeps the slices and holds of running requests alive. */
  renew(req: RenewRequest): RenewResult;
  /** Debits each request's cost and stores its record, exactly once per generation id; returns how many it applied. */
  settleBatch(items: SettleRequest[], slices: SliceReport[]): number;
  /** Adds credits once per grant id. */
  grant(req: GrantRequest): GrantResult;
  /** Sets what is taken back of a grant to a total. */
  reverse(req: ReverseRequest): ReverseResult;
  grantsSummary(): GrantsSummary;
  /** One grant by id, or null. */
  findGrant(grantId: string): GrantRecord | null;
  totals(): Totals;
  keyUsage(keyHash: string): KeyUsage;
  /** `keyUsage` of many keys in one call; keys without usage get zeros. */
  keysUsage(keyHashes: string[]): Record<string, KeyUsage>;
  /** A generation settled here and not yet in the records store. */
  pendingGeneration(genId: string): NewGeneration | null;
  /** The newest records not yet in the records store (one per generation), at most `limit`: the console's newest activity. */
  pendingRecords(limit: number): NewGeneration[];
  /** The records store has this batch: its records leave the outbox. Returns how many did. */
  recordsStored(batch: string): number;
  /** Sends every batch still waiting for the store again now. Returns how many. */
  resendRecords(): number;
  /** The oldest open holds and slices, for audits. */
  openHolds(limit?: number): OpenHold[];
  /** Slices that ended with requests admitted from them that never settled here. */
  sliceAudit(): SliceAudit;
  /** Records settled here and not yet in the records store. */
  outboxSize(): number;
  /** The account's budget alert thresholds. */
  alertRules(): AlertRules;
  /** Sets one key's budget alert percents (`keyHash`), or the account's balance amounts (null); none removes them. Validated by the caller. */
  setAlertThresholds(keyHash: string | null, thresholds: number[]): void;
  /** The newest alerts fired, newest first, at most `limit`. */
  alertsFired(limit: number): FiredAlert[];
}

/**
 * What a caller of an account's ledger sees: every RPC method, answered as a promise (the Durable
 * Object's stub, as `ledgerFor` returns it).
 */
export type LedgerApi = { [M in keyof LedgerRpc]: (...args: Parameters<LedgerRpc[M]>) => Promise<ReturnType<LedgerRpc[M]>> };

/** The part of the ledger an isolate's AccountLedger and its settle batcher call: the stub in production, a fake in unit tests. */
export type IsolateLedgerApi = Pick<LedgerApi, "admit" | "lease" | "renew" | "settleBatch">;
