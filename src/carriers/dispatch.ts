import type { Env } from "../env";
import type { PricedEndpoint } from "../catalog/catalog";
import { callCarrier, CarrierTimeout, type CarrierCall } from "./carrier-call";
import { carrierReason, classifyStatus, exhaustedError, type AttemptFailure } from "./attempts";

/** Thrown by an `accept` step when a 2xx answer is still unusable (malformed, oversized, not a stream). */
export class UnusableAnswer extends Error {}

export type Served<T> = { endpoint: PricedEndpoint; call: CarrierCall; value: T; failures: AttemptFailure[] };

/**
 * Tries the model's endpoints in order until one answers usably. Falls back on 429, 5xx, timeout,
 * network error or an unusable answer; nothing has reached the caller yet while this runs.
 * Throws the caller's ApiError (429/502/503) when none is left.
 */
export async function dispatch<T>(
  env: Env,
  modelId: string,
  endpoints: PricedEndpoint[],
  bodyFor: (endpoint: PricedEndpoint) => string,
  accept: (call: CarrierCall, endpoint: PricedEndpoint) => Promise<T>,
  clientSignal?: AbortSignal,
): Promise<Served<T>> {
  const failures: AttemptFailure[] = [];
  for (const endpoint of endpoints) {
    const provider = endpoint.providerEntry.name;
    let call: CarrierCall | "not_configured";
    try {
      call = await callCarrier(env, endpoint, bodyFor(endpoint), clientSignal);
    } catch (err) {
      if (clientSignal?.aborted) throw err;
      failures.push({ provider, kind: "failed", status: null, reason: err instanceof CarrierTimeout ? err.message : "the carrier could not be reached" });
      continue;
    }
    if (call === "not_configured") {
      failures.push({ provider, kind: "unavailable", status: null, reason: "carrier not configured" });
      continue;
    }
    try {
      if (!call.response.ok) {
        const { failure, retry } = classifyStatus(provider, call.response.status, await carrierReason(call.response));
        failures.push(failure);
        if (!retry) break;
        continue;
      }
      return { endpoint, call, value: await accept(call, endpoint), failures };
    } catch (err) {
      call.abort();
      if (clientSignal?.aborted) throw err;
      const reason = err instanceof UnusableAnswer || err instanceof CarrierTimeout ? err.message : "the connection failed while reading the answer";
      failures.push({ provider, kind: "failed", status: call.response.status, reason });
    } finally {
      call.answered();
    }
  }
  throw exhaustedError(failures, modelId);
}
