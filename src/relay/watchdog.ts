/**
 * One timer watching a relayed stream from both ends, re-armed lazily (no timer per chunk): a carrier
 * silent for `idleMs` (no read, no write under way), or a caller that has not drained a write for
 * `idleMs` (the runtime may never say it left, and an awaited write would hang for good). With a
 * keep-alive (`quiet`), a stream with nothing written for `pingMs` while the carrier is silent gets one.
 */
export class Watchdog {
  /** When the carrier's last read arrived. */
  lastReadAt = Date.now();
  /** When the write under way to the caller began; null when none is. */
  writeSince: number | null = null;
  /** When the last keep-alive was written. */
  private lastPingAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly idleMs: number,
    private readonly carrierSilent: () => void,
    private readonly callerStuck: () => void,
    private readonly keepalive: { pingMs: number; quiet: () => void } | null = null,
  ) {
    this.arm(keepalive ? Math.min(idleMs, keepalive.pingMs) : idleMs);
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
      let next = this.idleMs - idle;
      if (this.keepalive) {
        const quietFor = now - Math.max(this.lastReadAt, this.lastPingAt);
        if (this.writeSince === null && quietFor >= this.keepalive.pingMs) {
          this.lastPingAt = now;
          this.keepalive.quiet();
          next = Math.min(next, this.keepalive.pingMs);
        } else next = Math.min(next, this.keepalive.pingMs - quietFor);
      }
      this.arm(Math.max(1, next));
    }, ms);
  }
}
