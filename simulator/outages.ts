// Carrier outages: the next N requests to a carrier fail with one status, whatever they ask
// for, so routing tests can take a carrier down for an exact number of attempts. Pure state.

export interface Outage {
  remaining: number;
  /** The HTTP status to answer; 0 resets the connection instead. */
  status: number;
}

export const DEFAULT_OUTAGE_STATUS = 503;
const MAX_ARMED_KEYS = 10_000;

export function validOutageStatus(status: number): boolean {
  return status === 0 || (Number.isInteger(status) && status >= 300 && status <= 599);
}

export class Outages {
  private readonly outages = new Map<string, Outage>();
  /** Messages that already armed an outage: a retry of the same message must not re-arm it. */
  private readonly armedBy = new Set<string>();

  /** Sets (or with 0 requests clears) a carrier's outage. */
  set(carrier: string, requests: number, status: number): void {
    if (requests <= 0) this.outages.delete(carrier);
    else this.outages.set(carrier, { remaining: requests, status });
  }

  /** Arms an outage from a message directive once per (carrier, message); later sends of it are ignored. */
  armOnce(carrier: string, message: string, requests: number, status: number): void {
    const key = `${carrier}\n${message}`;
    if (this.armedBy.has(key)) return;
    if (this.armedBy.size >= MAX_ARMED_KEYS) this.armedBy.clear();
    this.armedBy.add(key);
    this.set(carrier, requests, status);
  }

  /** Uses up one failing request of the carrier's outage: the status to fail with, or undefined when up. */
  take(carrier: string): number | undefined {
    const o = this.outages.get(carrier);
    if (o === undefined) return undefined;
    o.remaining--;
    if (o.remaining <= 0) this.outages.delete(carrier);
    return o.status;
  }

  list(): Record<string, Outage> {
    return Object.fromEntries([...this.outages].map(([c, o]) => [c, { ...o }]));
  }
}
