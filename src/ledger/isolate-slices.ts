import type { SliceReport } from "./contract";
import { sleep, type Clock, type WaitUntil } from "./ledger-api";
import type { Slice } from "./slice";

/** A slice nobody uses for this long is retired and released, so idle isolates lock no money. */
export const IDLE_RELEASE_MS = 1_000;

/**
 * The slices of one account's balance that this isolate holds (src/ledger/account-ledger.ts leases them):
 * the current one admits, older ones wait for their requests in flight. Retiring, releasing and giving back
 * what no request holds go to the ledger as slice reports riding on the settle batcher (`report`).
 */
export class IsolateSlices {
  /** The slice admissions take from, if any. */
  current: Slice | undefined;
  /** Slices not yet released, by lease id. */
  private readonly open = new Map<string, Slice>();

  constructor(
    private readonly clock: Clock,
    /** Sends a slice report to the ledger with the next settle batch; resolves when it is stored. */
    private readonly report: (r: SliceReport) => Promise<void>,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Takes the hold from the current slice when it has room and its use time is not over (then it is retired); null otherwise. */
  take(holdNano: number, waitUntil: WaitUntil): Slice | null {
    const slice = this.current;
    if (slice && this.clock.now() >= slice.retireAt) this.retire(slice, waitUntil);
    else if (slice?.canTake(holdNano)) {
      slice.take(holdNano);
      return slice;
    }
    return null;
  }

  /** A fresh lease becomes the current slice; the one it replaces is retired. */
  add(fresh: Slice, waitUntil: WaitUntil): void {
    this.open.set(fresh.leaseId, fresh);
    const previous = this.current;
    this.current = fresh;
    if (previous) this.retire(previous, waitUntil);
  }

  /** A request admitted from the slice settled: its report to the ledger (a release when it was the retired slice's last). */
  finish(slice: Slice, holdNano: number, costNano: number, waitUntil: WaitUntil): SliceReport {
    slice.finish(holdNano, costNano, this.clock.now());
    const release = slice.inflight === 0 && slice.retired;
    const report = slice.report(release);
    if (release) this.forget(slice);
    else if (slice.inflight === 0 && !slice.idleCheck) this.watchIdle(slice, IDLE_RELEASE_MS, waitUntil);
    return report;
  }

  /** Slices with requests in flight whose admissions the ledger has not counted yet or whose renewal is due. */
  due(now: number, renewEveryMs: number): Slice[] {
    return [...this.open.values()].filter((s) => s.inflight > 0 && !s.released && (s.admitted > s.reported || now - s.renewedAt >= renewEveryMs));
  }

  /** The ledger no longer has these (it expired them): admit nothing more from them. */
  gone(ids: string[]): void {
    for (const id of ids) {
      const s = this.open.get(id);
      if (s && this.current === s) this.current = undefined;
      if (s) s.retired = true;
    }
  }

  /** The ledger has counted these reports' admissions. */
  acknowledge(reports: SliceReport[]): void {
    for (const r of reports) {
      const s = this.open.get(r.leaseId);
      if (s) s.reported = Math.max(s.reported, r.admitted);
    }
  }

  /**
   * Admits no more from the slice. Idle, it is released (its rest returns to the balance); with requests
   * in flight, what none of them holds is given back now (riding on the next ledger call: the lease that
   * usually follows), so an admission right after sees it — only their holds wait for their settles.
   */
  retire(slice: Slice, waitUntil: WaitUntil): void {
    if (this.current === slice) this.current = undefined;
    slice.retired = true;
    if (slice.released) return;
    if (slice.inflight === 0) {
      this.forget(slice);
      waitUntil(this.report(slice.report(true)));
    } else if (slice.remainingNano > 0) {
      slice.giveBackRest();
      waitUntil(this.report(slice.report()));
    }
  }

  /** One idle check per slice, not one per request: it re-arms itself while the slice keeps being used. */
  private watchIdle(slice: Slice, ms: number, waitUntil: WaitUntil): void {
    slice.idleCheck = true;
    waitUntil(
      sleep(this.clock, ms).then(() => {
        slice.idleCheck = false;
        if (slice.inflight > 0 || slice.released) return; // busy (its last settle re-arms) or gone
        const idle = this.clock.now() - slice.idleSince;
        if (idle >= IDLE_RELEASE_MS) this.retire(slice, waitUntil);
        else this.watchIdle(slice, IDLE_RELEASE_MS - idle, waitUntil);
      }),
    );
  }

  private forget(slice: Slice): void {
    slice.released = true;
    this.open.delete(slice.leaseId);
  }
}
