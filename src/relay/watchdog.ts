/**
 * One timer watching a relayed stream from both ends, re-armed lazily (no timer per chunk): a carrier
 * silent for `idleMs` (no read, no write under way), or a caller that has not drained a write for
 * `idleMs` (the runtime may never say it left, and an awaited write would hang for good).
 */
export class Watchdog {
  /** When the carrier's last read arrived. */
  lastReadAt = Date.now();
  /** When the write under way to the caller began; null when none is. */
  writeSince: number | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly idleMs: number,
    private readonly carrierSilent: () => void,
    private readonly callerStuck: () => void,
  ) {
    this.arm(idleMs);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      const now = Date.now();
      if (this.writeSince !== null && now - this.writeSince >= this.idleMs) return this.callerStuck();
      const idle = now - Math.max(this.lastReadAt, this.writeSince ?? 0);
      if (this.writeSince === null && idle >= this.idleMs) return this.carrierSilent();
      this.arm(Math.max(1, this.idleMs - idle));
    }, ms);
  }
}
