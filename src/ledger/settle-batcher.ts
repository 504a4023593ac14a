import type { IsolateLedgerApi, SettleRequest, SliceReport } from "./contract";
import { sleep, type Clock, type WaitUntil } from "./ledger-api";
import { settleSummary, type SettleQueueSender } from "./settle-queue";
import { byokUpstreamNano, limitCostNano } from "./byok-usage";

/** What settles not yet sent add to usage: their cost, and their BYOK usage (docs/byok.md). */
export type Gathering = { costNano: number; byokNano: number };

/** Sent at once when this full; also keeps one RPC's transaction short. */
export const MAX_BATCH = 64;
const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 4000;

type Batch = { items: SettleRequest[]; slices: Map<string, SliceReport>; sendAt: number };
export type BatchEnd = "stored" | "queued" | "lost";

/** A batch riding on another ledger call (`takeAlong`): that call applies it first. */
export type Carried = {
  items: SettleRequest[];
  slices: SliceReport[];
  /** The call returned: the ledger has the batch. */
  stored(): void;
  /** The call failed or did not answer in time: the batch is sent on its own, retries and queue included. */
  failed(waitUntil: WaitUntil): void;
};

export type BatcherDeps = {
  accountId: string;
  ledger: () => IsolateLedgerApi;
  queue: SettleQueueSender;
  clock: Clock;
  /** A batch is sent this long after the settle that opened it. */
  windowMs: number;
  /** How long a batch is retried before it goes to the queue. */
  retryBudgetMs: number;
  /** One attempt not answered within this long is given up (and retried). */
  attemptTimeoutMs: number;
  /** Told when a batch's slice reports have been stored (or handed to the queue). */
  onEnd: (slices: SliceReport[], end: BatchEnd) => void;
  log: (message: string, detail: string) => void;
};

/**
 * Gathers one account's settles in an isolate into batches: one ledger RPC and one storage commit per
 * batch, its dominant cost. A batch always waits its window, also after a quiet spell: more settles share
 * one at low traffic, and its RPC and commit stay off the start of the isolate's next request. The settle
 * that opens a batch sends it when its window ends, under its own waitUntil; settles arriving meanwhile
 * join and end at once (a request cannot wait on another request's I/O in workerd). Whoever touches the
 * batch once its time has come sends it, so a batch whose opener died during its wait is never left open.
 * A batch is retried with backoff for the retry budget — an attempt the ledger does not answer within
 * `attemptTimeoutMs` counts as failed (logged; `settleBatch` is idempotent, so one that lands late
 * applies once) — then handed to the settle queue; only if that fails too is it lost, and logged with
 * its generation ids and amounts.
 */
export class SettleBatcher {
  private gathering: Batch | undefined;
  /** Settles not yet stored in the ledger or the queue, by generation id (`/generation` finds them here). */
  private readonly unsent = new Map<string, SettleRequest>();

  constructor(private readonly d: BatcherDeps) {}

  /** Adds a settle (or only slice reports) to the account's batch; resolves when this request's part is done. */
  add(item: SettleRequest | null, slices: SliceReport[]): Promise<void> {
    const now = this.d.clock.now();
    let batch = this.gathering;
    const opener = batch === undefined;
    if (!batch) batch = this.gathering = { items: [], slices: new Map(), sendAt: now + this.d.windowMs };
    if (item) {
      batch.items.push(item);
      this.unsent.set(item.genId, item);
    }
    for (const s of slices) mergeReport(batch.slices, s);
    if (batch.items.length + batch.slices.size >= MAX_BATCH || now >= batch.sendAt) return this.take(batch);
    if (!opener) return Promise.resolve();
    const b = batch;
    return sleep(this.d.clock, b.sendAt - now).then(() => (this.gathering === b ? this.take(b) : undefined));
  }

  /** Sends the gathering batch if its time has come and its opener has not (it may have died). */
  flushIfDue(waitUntil: WaitUntil): void {
    const b = this.gathering;
    if (b && this.d.clock.now() >= b.sendAt) waitUntil(this.take(b));
  }

  /**
   * Hands the gathering batch to a ledger call this isolate is about to make anyway (an admission, a
   * lease), which applies it before it decides: the ledger then sees the requests that ended here (their
   * holds gone, their slices released), and the batch costs no RPC of its own. Null when nothing gathers.
   */
  takeAlong(): Carried | null {
    const b = this.gathering;
    if (!b) return null;
    this.gathering = undefined; // its opener, waking, finds it gone
    const slices = [...b.slices.values()];
    let open = true;
    return {
      items: b.items,
      slices,
      stored: () => {
        if (open) this.ended(b.items, slices, "stored");
        open = false;
      },
      failed: (waitUntil) => {
        if (open) waitUntil(this.send(b.items, slices));
        open = false;
      },
    };
  }

  /** A settle this isolate has not yet stored anywhere. */
  pending(genId: string): SettleRequest | undefined {
    return this.unsent.get(genId);
  }

  /** Σ cost of this key's settles not yet stored anywhere (with what carriers charged for BYOK ones when `withByok`). */
  unsentCostNano(keyHash: string, withByok = false): number {
    let sum = 0;
    for (const i of this.unsent.values()) if (i.keyHash === keyHash) sum += limitCostNano(i, withByok);
    return sum;
  }

  /**
   * What the settles waiting in the gathering batch (one key's, or all) add: their cost, and what carriers charged
   * the account's own keys for the BYOK ones. Not sent, so in no ledger read yet.
   */
  gatheringSums(keyHash?: string): Gathering {
    const sum = { costNano: 0, byokNano: 0 };
    for (const i of this.gathering?.items ?? [])
      if (keyHash === undefined || i.keyHash === keyHash) {
        sum.costNano += i.costNano;
        sum.byokNano += byokUpstreamNano(i);
      }
    return sum;
  }

  /** Nothing gathering or unsent. */
  get idle(): boolean {
    return this.gathering === undefined && this.unsent.size === 0;
  }

  private take(batch: Batch): Promise<void> {
    if (this.gathering === batch) this.gathering = undefined;
    return this.send(batch.items, [...batch.slices.values()]);
  }

  private async send(items: SettleRequest[], slices: SliceReport[]): Promise<void> {
    const deadline = this.d.clock.now() + this.d.retryBudgetMs;
    let end: BatchEnd = "lost";
    for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      const limit = Math.max(1, Math.min(this.d.attemptTimeoutMs, deadline - this.d.clock.now()));
      try {
        await within(this.d.ledger().settleBatch(items, slices), limit, this.d.clock);
        end = "stored";
        break;
      } catch (err) {
        if (err instanceof AttemptTimeout)
          this.d.log(`ledger did not answer a settle batch within ${limit} ms: retrying`, settleSummary(this.d.accountId, items));
        if (this.d.clock.now() + delay > deadline) break;
        await sleep(this.d.clock, delay);
      }
    }
    if (end === "lost") {
      try {
        await this.d.queue(this.d.accountId, items, slices);
        end = "queued";
        this.d.log("ledger unreachable: settles handed to the settle queue", settleSummary(this.d.accountId, items));
      } catch {
        this.d.log("ledger and settle queue unreachable: settles NOT stored", settleSummary(this.d.accountId, items));
      }
    }
    this.ended(items, slices, end);
  }

  private ended(items: SettleRequest[], slices: SliceReport[], end: BatchEnd): void {
    for (const i of items) if (this.unsent.get(i.genId) === i) this.unsent.delete(i.genId);
    this.d.onEnd(slices, end);
  }
}

/** One report per slice in a batch: the highest admitted count and rest given back, released if any report says so. */
function mergeReport(into: Map<string, SliceReport>, r: SliceReport): void {
  const prev = into.get(r.leaseId);
  const admitted = Math.max(prev?.admitted ?? 0, r.admitted);
  const release = (prev?.release ?? false) || (r.release ?? false);
  const returnedNano = Math.max(prev?.returnedNano ?? 0, r.returnedNano ?? 0);
  into.set(r.leaseId, { leaseId: r.leaseId, admitted, ...(release ? { release } : {}), ...(returnedNano > 0 ? { returnedNano } : {}) });
}

class AttemptTimeout extends Error {}

/** `p`, or an AttemptTimeout once `ms` pass first (the call itself is left to land or not: settles are idempotent). */
function within<T>(p: Promise<T>, ms: number, clock: Clock): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.setTimer(ms, () => reject(new AttemptTimeout()));
    p.then(
      (v) => {
        cancel();
        resolve(v);
      },
      (err: unknown) => {
        cancel();
        reject(err);
      },
    );
  });
}
