import type { Clock, WaitUntil } from "../../src/ledger/ledger-api";

type Timer = { at: number; seq: number; fn: () => void; cancelled: boolean };

/** A call that never answers (a hung RPC): returned by a fake, it is not counted as I/O, so `drain` does not wait for it. */
export const never: Promise<never> = new Promise<never>(() => {});

/**
 * A clock whose time moves only when the test says so. Timers fire in time order as it advances;
 * `kill` drops pending timers, as a request that died takes its timers with it. Calls to a ledger
 * wrapped by `ledger()` count as I/O: `drain` waits until none is under way (real Durable Object
 * calls included) and every reaction they queued has run. Work waiting for a timer waits for `advance`.
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];
  private io = 0;
  private ioIdle: (() => void) | undefined;

  constructor(start = 1_800_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Work the code under test hands to waitUntil runs on by itself; its failures are not the test's. */
  readonly waitUntil: WaitUntil = (p) => {
    p.catch(() => {});
  };

  /** The same API, with every call counted as I/O for `drain`. */
  ledger<T extends object>(api: T): T {
    return new Proxy(api, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result: unknown = Reflect.apply(value, target, args);
          return this.track(result === never ? never : Promise.resolve(result));
        };
      },
    });
  }

  private track<T>(p: Promise<T>): Promise<T> {
    if (p === never) return p;
    this.io++;
    const done = () => {
      if (--this.io === 0) this.ioIdle?.();
    };
    p.then(done, done);
    return p;
  }

  /** Waits until no I/O is under way and every reaction already queued has run. */
  async drain(): Promise<void> {
    for (;;) {
      await microtasks();
      if (this.io === 0) return;
      await new Promise<void>((resolve) => (this.ioIdle = resolve));
      this.ioIdle = undefined;
    }
  }

  /** Moves time forward by `ms`, firing each due timer at its own time and draining what it starts. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await this.drain(); // timers that work already under way is about to set
    for (;;) {
      const next = this.timers.filter((x) => !x.cancelled && x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.t = Math.max(this.t, next.at);
      next.cancelled = true;
      next.fn();
      await this.drain();
    }
    this.t = end;
    this.timers = this.timers.filter((x) => !x.cancelled);
    await this.drain();
  }

  /** Drops the pending timers that `which` picks (all by default): their request died. */
  kill(which: (at: number) => boolean = () => true): void {
    for (const x of this.timers) if (which(x.at)) x.cancelled = true;
  }

  pendingTimers(): number {
    return this.timers.filter((x) => !x.cancelled).length;
  }
}

/** Lets every promise reaction that is already queued run. */
export async function microtasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
