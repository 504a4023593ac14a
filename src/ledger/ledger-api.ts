/** Time and timers, injected so unit tests can play minutes in microseconds. */
export interface Clock {
  now(): number;
  /** Calls `fn` after `ms`; returns a function that cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(ms, resolve));
}

/** Registers work the current request must finish before its isolate may stop (ExecutionContext.waitUntil). */
export type WaitUntil = (p: Promise<unknown>) => void;
