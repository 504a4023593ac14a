import type { NewGeneration } from "../db/schema";
import type { AdmitRequest, AdmitResult, AdmitRoute, SettleRequest, SliceReport } from "./contract";
import type { LedgerTimings } from "./ledger-config";
import type { WaitUntil } from "./ledger-api";
import { SettleBatcher, type BatchEnd, type BatcherDeps, type Carried, type Gathering } from "./settle-batcher";
import { IsolateSlices } from "./isolate-slices";
import { Slice } from "./slice";
import { Ticket } from "./ticket";
import { limitCostNano } from "./byok-usage";

export { Ticket };

/** A slice admits for this long, then is retired (a fresh lease follows). */
const SLICE_USE_MS = 2_000;
/** A lease asks for this many of the asking request's holds. */
const SLICE_HOLDS = 64;
/** A request still running this long after admission makes sure the ledger has counted it. */
const REPORT_AFTER_MS = 1_000;

/** What admission needs to know of a request: the ledger's `AdmitRequest`, its abandoned record built only when the ledger is asked. */
export type AdmitInput = Omit<AdmitRequest, "abandoned" | "unseenNano"> & { abandoned: () => NewGeneration };

export type Admission = { ok: true; ticket: Ticket; route?: AdmitRoute } | Exclude<AdmitResult, { ok: true }>;
export type SettleInput = Omit<SettleRequest, "leaseId" | "releaseFreeSlot"> & {
  /** Whether a priced endpoint served the request (a free slot its admission counted is then given back). */
  servedPriced?: boolean;
};

export type AccountLedgerDeps = Pick<BatcherDeps, "accountId" | "ledger" | "queue" | "clock" | "log"> & {
  timings: LedgerTimings;
  newLeaseId: () => string;
};

/**
 * The isolate's side of one account's ledger, in one object: admission (from an isolate slice of the
 * balance, or by asking the ledger), leasing the slices (isolate-slices.ts keeps them), renewing what running requests hold,
 * and batching settles (with retries and the queue behind them).
 *
 * - Paid models on keys without a limit are admitted from a slice (no round trip); keys with a limit,
 *   free models (their admission counts them against the account's free-model rate limits) and
 *   requests that arrive while this isolate is leasing ask the ledger.
 * - Every running request keeps its backing alive: its heartbeat reports new admissions after
 *   REPORT_AFTER_MS and renews its slice or hold every `renewEveryMs`, so the ledger only expires
 *   what belongs to a dead isolate (docs/money.md, Overdraft bound).
 * - Settles carry how many requests each slice admitted; a released slice stays in the ledger until
 *   all of those have settled.
 */
export class AccountLedger {
  /** This isolate's slices of the account's balance. */
  private readonly slices: IsolateSlices;
  /** Admitted requests still running (from a slice, or on a hold of their own when `slice` is null). */
  private readonly running = new Set<Ticket>();
  private leasing = false;
  private renewing = false;
  private readonly batcher: SettleBatcher;

  constructor(private readonly d: AccountLedgerDeps) {
    this.batcher = new SettleBatcher({
      accountId: d.accountId,
      ledger: d.ledger,
      queue: d.queue,
      clock: d.clock,
      windowMs: d.timings.settleWindowMs,
      retryBudgetMs: d.timings.settleRetryBudgetMs,
      attemptTimeoutMs: d.timings.settleAttemptTimeoutMs,
      onEnd: (slices, end) => this.batchEnded(slices, end),
      log: d.log,
    });
    this.slices = new IsolateSlices(d.clock, (report) => this.batcher.add(null, [report]));
  }

  /**
   * May this request run? Holds its worst case until it settles — or, when the key and the balance cannot
   * pay that but can pay its least hold (`minHoldNano`), what they can pay (the ticket's `holdNano`).
   */
  async admit(req: AdmitInput, waitUntil: WaitUntil): Promise<Admission> {
    this.batcher.flushIfDue(waitUntil);
    if (req.paid && req.limitNano === null && !req.free) {
      // null: another request is leasing, or the balance cannot back a slice for this whole hold: the
      // ledger admits it on a hold of its own (lowered to what can be paid, or refused with the figures).
      const sliced = await this.admitFromSlice(req.holdNano, waitUntil);
      if (sliced) return { ok: true, ticket: this.track(new Ticket(req.genId, req.keyHash, req.holdNano, sliced, this.d.clock.now()), waitUntil) };
    }
    let admitted: AdmitResult;
    try {
      admitted = await this.withBatch(
        (settle) =>
          this.d.ledger().admit({
            genId: req.genId,
            keyHash: req.keyHash,
            limitNano: req.limitNano,
            limitReset: req.limitReset ?? null,
            holdNano: req.holdNano,
            ...(req.minHoldNano !== undefined ? { minHoldNano: req.minHoldNano } : {}),
            ...(req.includeByok ? { includeByok: true } : {}),
            ...(req.keyHoldNano !== undefined ? { keyHoldNano: req.keyHoldNano } : {}),
            paid: req.paid,
            abandoned: req.abandoned(),
            ...(req.limitNano !== null ? { unseenNano: this.unseenNano(req.keyHash, req.includeByok === true, settle?.items) } : {}),
            ...(req.free ? { free: req.free } : {}),
            ...(settle ? { settle } : {}),
          }),
        waitUntil,
      );
    } catch (err) {
      // A free endpoint risks no money: it runs even when the ledger cannot be reached (uncounted by the rate limits, logged).
      if (!req.free) throw err;
      this.d.log("ledger unreachable: a free request admitted uncounted", JSON.stringify({ account: this.d.accountId, gen: req.genId }));
      return { ok: true, ticket: new Ticket(req.genId, req.keyHash, 0, null, this.d.clock.now()), ...(req.paid ? { route: "free_only" as const } : {}) };
    }
    if (!admitted.ok) return admitted;
    const { route } = admitted;
    const ticket = new Ticket(req.genId, req.keyHash, admitted.holdNano, null, this.d.clock.now(), req.free !== undefined && route !== "paid_only");
    return { ok: true, ticket: this.track(ticket, waitUntil), ...(route ? { route } : {}) };
  }

  /**
   * Debits the request's cost and stores its record (batched, exactly once). `ticket` is null for a
   * request that was never admitted (refused, or failed before admission): only its record is stored.
   * Returns when this request's part is done (put it under waitUntil).
   */
  settle(ticket: Ticket | null, input: SettleInput, waitUntil: WaitUntil): Promise<void> {
    if (ticket?.done) return Promise.resolve();
    const reports: SliceReport[] = [];
    const { servedPriced, ...item } = input;
    let settle: SettleRequest = ticket?.freeSlot && servedPriced ? { ...item, releaseFreeSlot: true } : item;
    if (ticket) {
      ticket.done = true;
      ticket.stopHeartbeat?.();
      this.running.delete(ticket);
      const slice = ticket.slice;
      if (slice) {
        settle = { ...settle, leaseId: slice.leaseId };
        reports.push(this.slices.finish(slice, ticket.holdNano, item.costNano, waitUntil));
      }
    }
    return this.batcher.add(settle, reports);
  }

  /**
   * What this isolate has of a key that the ledger cannot see: holds of its requests running on a slice
   * (admitted before the key had a limit) and costs of its settles not yet stored (with what carriers charged for
   * BYOK ones, when the key counts BYOK usage). A key newly given a limit is held to it at once here, slices and batches included.
   */
  private unseenNano(keyHash: string, withByok: boolean, carried: SettleRequest[] = []): number {
    let sum = this.batcher.unsentCostNano(keyHash, withByok);
    for (const i of carried) if (i.keyHash === keyHash) sum -= limitCostNano(i, withByok); // the same call applies them
    for (const t of this.running) if (t.slice && t.keyHash === keyHash) sum += t.holdNano;
    return sum;
  }

  /**
   * Makes a ledger call with the gathering settle batch riding on it (`SettleBatcher.takeAlong`): the
   * ledger applies the batch first, so it decides knowing every request that ended here. Should the call
   * fail, or not answer within the settle attempt timeout, the batch is sent on its own.
   */
  private async withBatch<T>(call: (settle: { items: SettleRequest[]; slices: SliceReport[] } | undefined) => Promise<T>, waitUntil: WaitUntil): Promise<T> {
    const carried: Carried | null = this.batcher.takeAlong();
    if (!carried) return call(undefined);
    const stop = this.d.clock.setTimer(this.d.timings.settleAttemptTimeoutMs, () => carried.failed(waitUntil));
    try {
      const result = await call({ items: carried.items, slices: carried.slices });
      carried.stored();
      this.slices.acknowledge(carried.slices);
      return result;
    } catch (err) {
      carried.failed(waitUntil);
      throw err;
    } finally {
      stop();
    }
  }

  /** A settle of this account that this isolate has not yet stored in the ledger. */
  unsentRecord(genId: string): NewGeneration | undefined {
    return this.batcher.pending(genId)?.record;
  }

  /** What this account's settles still gathering here add (one key's, or all), not yet sent: see usage-now.ts. */
  gatheringSums(keyHash?: string): Gathering {
    return this.batcher.gatheringSums(keyHash);
  }

  /** Nothing held, running or unsent here: the object may be dropped. */
  get idle(): boolean {
    return this.slices.size === 0 && this.running.size === 0 && !this.leasing && this.batcher.idle;
  }

  /**
   * Admits from the account's slice, leasing a new one when it has no room. While one request leases,
   * the others answer null (they then ask the ledger for themselves): waiting on another request's
   * lease would tie this request to that request's I/O, which workerd does not allow, and leasing in
   * parallel would split the balance into many half-used slices.
   */
  private async admitFromSlice(holdNano: number, waitUntil: WaitUntil): Promise<Slice | null> {
    const taken = this.slices.take(holdNano, waitUntil);
    if (taken) return taken;
    if (this.leasing) return null;
    // Too little left for this hold: retired, so its rest returns to the balance with its release, which
    // rides on the lease below with the settles still gathering here. Otherwise an idle slice would keep
    // money the ledger needs for this very lease.
    if (this.slices.current) this.slices.retire(this.slices.current, waitUntil);
    this.leasing = true;
    try {
      const leaseId = this.d.newLeaseId();
      const granted = await this.withBatch(
        (settle) => this.d.ledger().lease({ leaseId, holdNano, wantNano: SLICE_HOLDS * holdNano, ...(settle ? { settle } : {}) }),
        waitUntil,
      );
      if (!granted.ok) return null;
      const fresh = new Slice(leaseId, granted.grantNano, this.d.clock.now(), this.d.clock.now() + SLICE_USE_MS);
      this.slices.add(fresh, waitUntil);
      fresh.take(holdNano);
      return fresh;
    } finally {
      this.leasing = false;
    }
  }

  /** Counts the request as running and starts its heartbeat: its own timer, in its own request context. */
  private track(ticket: Ticket, waitUntil: WaitUntil): Ticket {
    this.running.add(ticket);
    const beat = (ms: number) => {
      ticket.stopHeartbeat = this.d.clock.setTimer(ms, () => {
        if (ticket.done) return;
        waitUntil(this.renewDue());
        beat(this.d.timings.renewEveryMs);
      });
    };
    beat(REPORT_AFTER_MS);
    return ticket;
  }

  /**
   * One renew RPC for everything of this account that running requests need kept: slices with
   * requests in flight whose admissions the ledger has not counted yet or whose renewal is due, and
   * request holds whose renewal is due. A slice the ledger no longer has admits nothing more.
   */
  private async renewDue(): Promise<void> {
    if (this.renewing) return;
    const now = this.d.clock.now();
    const every = this.d.timings.renewEveryMs;
    const slices = this.slices.due(now, every);
    const holds = [...this.running].filter((t) => !t.slice && now - t.renewedAt >= every);
    if (slices.length === 0 && holds.length === 0) return;
    const reports = slices.map((s) => s.report());
    this.renewing = true;
    try {
      const { gone } = await this.d.ledger().renew({ slices: reports, holds: holds.map((t) => t.genId) });
      for (const s of slices) s.renewedAt = now;
      for (const t of holds) t.renewedAt = now;
      this.slices.acknowledge(reports);
      this.slices.gone(gone); // the ledger expired them: admit nothing more from them
    } catch {
      // The next heartbeat tries again; three may fail before the lease TTL passes.
    } finally {
      this.renewing = false;
    }
  }

  private batchEnded(reports: SliceReport[], end: BatchEnd): void {
    if (end !== "lost") this.slices.acknowledge(reports);
  }
}
