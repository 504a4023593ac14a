import type { CarrierAttempt } from "../db/carrier-attempt";
import { isCarrierFault } from "../db/carrier-attempt";
import { isolate } from "../isolate";

/** Endpoints with a failure streak an isolate keeps at most; the one failing longest ago is dropped first. */
const MAX_ENDPOINTS = 1000;

type Streak = { failures: number; lastFailureAt: number };

/**
 * The isolate's own, immediate view of endpoint health: consecutive failures per (model, carrier
 * slug), from every attempt dispatch makes. It acts at once, where the Cron Trigger's snapshot is a
 * minute or more behind. A carrier fault (`isCarrierFault`: a 5xx, 502 unreachable and 504 timeout
 * included, or the carrier's own 401/402/403/404…) is a failure; a 429 neither counts nor resets;
 * anything else (the carrier answered, or judged the request invalid) ends the streak. Only endpoints on
 * a streak are kept, at most MAX_ENDPOINTS.
 */
export class IsolateHealth {
  /** Insertion order = order of the last failure, oldest first (a failure re-inserts its key). */
  private readonly streaks = new Map<string, Streak>();

  constructor(private readonly maxEndpoints = MAX_ENDPOINTS) {}

  note(attempt: CarrierAttempt): void {
    if (attempt.status === 429) return;
    const key = keyOf(attempt.model, attempt.provider);
    if (!isCarrierFault(attempt.status)) {
      this.streaks.delete(key);
      return;
    }
    const failures = (this.streaks.get(key)?.failures ?? 0) + 1;
    this.streaks.delete(key);
    this.streaks.set(key, { failures, lastFailureAt: attempt.at + attempt.latencyMs });
    if (this.streaks.size > this.maxEndpoints) this.streaks.delete(this.streaks.keys().next().value!);
  }

  /**
   * The endpoint's current streak; 0 once `memoryMs` has passed since its last failure, so an endpoint
   * that failed is tried again (and one more failure puts it straight back on its streak).
   */
  consecutiveFailures(model: string, provider: string, now: number, memoryMs: number): number {
    const s = this.streaks.get(keyOf(model, provider));
    return s && now - s.lastFailureAt < memoryMs ? s.failures : 0;
  }

  /** How many endpoints are on a streak (tests: the bound). */
  get size(): number {
    return this.streaks.size;
  }
}

function keyOf(model: string, provider: string): string {
  return `${model}\n${provider}`;
}

/** This isolate's streaks: dispatch notes every attempt, routing reads them. */
const streaks = isolate.slot("failure streaks", () => new IsolateHealth());
export const isolateHealth = (): IsolateHealth => streaks.get();
