import type { PricedEndpoint } from "../catalog/catalog";
import type { CarrierAttempt } from "../db/carrier-attempt";

/** How the served attempt ended, as far as its health figures go. */
export type ServedEnd = { status: number; firstTokenAt: number | null; completionTokens: number; endedAt: number; streamed: boolean };

/**
 * The carrier attempts of one request, in order. Failed attempts are final when they fail; the one
 * that serves is completed when the request ends (its first token and throughput are known only then).
 * `onAttempt` sees each attempt once it is final (isolate-local endpoint health).
 */
export class AttemptLog {
  private readonly failed: CarrierAttempt[] = [];
  private serving: { endpoint: PricedEndpoint; at: number; status: number } | null = null;

  constructor(private readonly onAttempt: (a: CarrierAttempt) => void = () => {}) {}

  fail(endpoint: PricedEndpoint, status: number, at: number, now = Date.now()): void {
    const attempt = { ...who(endpoint), status, at, latencyMs: now - at, tokensPerSecond: null };
    this.failed.push(attempt);
    this.onAttempt(attempt);
  }

  serve(endpoint: PricedEndpoint, status: number, at: number): void {
    this.serving = { endpoint, at, status };
  }

  /** Every attempt, the served one completed with `end` (an error status there counts as the carrier's). */
  final(end: ServedEnd | null): CarrierAttempt[] {
    if (!this.serving || !end) return [...this.failed];
    const { endpoint, at } = this.serving;
    const firstAt = end.firstTokenAt ?? end.endedAt;
    // A stream's pace is measured after its first token; a non-stream answer arrives whole, so over the attempt (a lower bound).
    const seconds = (end.endedAt - (end.streamed ? firstAt : at)) / 1000;
    const served: CarrierAttempt = {
      ...who(endpoint),
      // A stream that failed after its first byte was the carrier's failure; a caller leaving (499) was not.
      status: end.status >= 500 ? end.status : this.serving.status,
      at,
      latencyMs: firstAt - at,
      tokensPerSecond: end.completionTokens > 0 && seconds > 0 ? end.completionTokens / seconds : null,
    };
    return [...this.failed, served];
  }

  /** Reports the served attempt to `onAttempt`; once, when the request settles. */
  settled(attempts: CarrierAttempt[]): void {
    const served = this.serving ? attempts.at(-1) : undefined;
    if (served) this.onAttempt(served);
  }

  /** The attempts as the contract's RouterAttempt list (provider display name, model, status). */
  attemptsSoFar(): Array<{ provider: string; model: string; status: number }> {
    const list = this.failed.map((a) => ({ provider: a.providerName, model: a.model, status: a.status }));
    if (this.serving) list.push({ provider: this.serving.endpoint.providerEntry.name, model: this.serving.endpoint.modelId, status: this.serving.status });
    return list;
  }
}

function who(e: PricedEndpoint) {
  return { model: e.modelId, provider: e.provider, providerName: e.providerEntry.name };
}
