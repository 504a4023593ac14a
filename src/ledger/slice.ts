import type { SliceReport } from "./contract";

/**
 * An isolate's slice of an account's balance (one lease in the ledger): requests are admitted against
 * it locally, each taking its hold from what remains; a settle gives back the hold less the cost.
 * It counts the requests admitted from it so the ledger can tell, when the slice ends, whether every
 * one of them settled.
 */
export class Slice {
  remainingNano: number;
  /** Admitted and not yet settled. */
  inflight = 0;
  /** Admitted from this slice so far. */
  admitted = 0;
  /** The `admitted` count the ledger has acknowledged. */
  reported = 0;
  /** When the ledger last renewed it (ms epoch). */
  renewedAt: number;
  /** No new admissions: its use time is over, it sat idle, or the ledger no longer has it. */
  retired = false;
  /** The release has been sent: the isolate forgets it. */
  released = false;
  /** When the last request in flight settled; 0 while busy. */
  idleSince = 0;
  /** Whether an idle check is armed (one per slice, not one per request). */
  idleCheck = false;
  /** What was given back to the balance before its release (`giveBackRest`). */
  returnedNano = 0;

  constructor(
    readonly leaseId: string,
    grantNano: number,
    now: number,
    /** After this (ms epoch) the slice admits no more; a fresh lease follows. */
    readonly retireAt: number,
  ) {
    this.remainingNano = grantNano;
    this.renewedAt = now;
  }

  canTake(holdNano: number): boolean {
    return !this.retired && this.remainingNano >= holdNano;
  }

  take(holdNano: number): void {
    this.remainingNano -= holdNano;
    this.inflight++;
    this.admitted++;
    this.idleSince = 0;
  }

  /** A request admitted from it settled: its hold returns, less what it cost. */
  finish(holdNano: number, costNano: number, now: number): void {
    this.inflight--;
    this.remainingNano += holdNano - costNano;
    if (this.inflight === 0) this.idleSince = now;
  }

  /** Retired with requests in flight: what no request holds goes back to the balance now, not at the release. */
  giveBackRest(): void {
    this.returnedNano += this.remainingNano;
    this.remainingNano = 0;
  }

  report(release = false): SliceReport {
    return {
      leaseId: this.leaseId,
      admitted: this.admitted,
      ...(release ? { release } : {}),
      ...(this.returnedNano > 0 ? { returnedNano: this.returnedNano } : {}),
    };
  }
}
