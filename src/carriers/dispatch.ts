import type { PricedEndpoint } from "../catalog/catalog";
import { callCarrier, CarrierTimeout, type CarrierAccess, type CarrierCall, type WireRequest } from "./carrier-call";
import { carrierReason, classifyStatus, exhaustedError, type AttemptFailure } from "./attempts";
import type { AttemptLog } from "./attempt-log";
import { TIMEOUT_STATUS, UNREACHABLE_STATUS } from "../db/carrier-attempt";
import { Untranslatable } from "../request/errors";

/** Thrown by an `accept` step when a 2xx answer is still unusable (malformed, oversized, not a stream). */
export class UnusableAnswer extends Error {}

export type Dispatched<T> = { endpoint: PricedEndpoint; call: CarrierCall; value: T; failures: AttemptFailure[] };

/**
 * Tries the endpoints in order (a model's carriers, then the next fallback model's) until one answers
 * usably. Any error answer moves on: 429, 5xx, timeout, network error, an unusable answer, a carrier's
 * own 4xx (401, 402, 403, 404…), and a rejection of the request (400, 413, 422), which may be that
 * carrier's alone (a parameter it does not take, a shorter context). Nothing has reached the caller
 * while this runs. Every attempt goes to `log`. Throws the caller's ApiError (`exhaustedError`) when
 * none is left; `label` names what was asked for, `skipped` the endpoints left out before any attempt
 * (named first in that error).
 */
export async function dispatch<T>(
  access: CarrierAccess,
  label: string,
  endpoints: PricedEndpoint[],
  bodyFor: (endpoint: PricedEndpoint) => WireRequest,
  stream: boolean,
  accept: (call: CarrierCall, endpoint: PricedEndpoint) => Promise<T>,
  log: AttemptLog,
  clientSignal?: AbortSignal,
  skipped: AttemptFailure[] = [],
): Promise<Dispatched<T>> {
  const failures: AttemptFailure[] = [...skipped];
  for (const endpoint of endpoints) {
    const provider = endpoint.providerEntry.name;
    let wire: WireRequest;
    try {
      wire = bodyFor(endpoint);
    } catch (err) {
      // What this carrier's protocol cannot express: rejected without a call (no health fault).
      if (!(err instanceof Untranslatable)) throw err;
      failures.push({ provider, kind: "rejected", status: 400, reason: err.message });
      continue;
    }
    const at = Date.now();
    let call: CarrierCall | "not_configured";
    try {
      call = await callCarrier(access, endpoint, wire, stream, clientSignal);
    } catch (err) {
      if (clientSignal?.aborted) throw err;
      log.fail(endpoint, noAnswerStatus(err), at);
      failures.push({ provider, kind: "failed", status: null, reason: err instanceof CarrierTimeout ? err.message : "the carrier could not be reached" });
      continue;
    }
    if (call === "not_configured") {
      // Our configuration, not the carrier's health: no attempt is logged.
      failures.push({ provider, kind: "unavailable", status: null, reason: "carrier not configured" });
      continue;
    }
    try {
      if (!call.response.ok) {
        failures.push(classifyStatus(provider, call.response.status, await carrierReason(call.response)));
        log.fail(endpoint, call.response.status, at);
        continue;
      }
      const value = await accept(call, endpoint);
      log.serve(endpoint, call.response.status, at);
      return { endpoint, call, value, failures };
    } catch (err) {
      call.abort();
      if (clientSignal?.aborted) throw err;
      log.fail(endpoint, noAnswerStatus(err), at);
      const reason = err instanceof UnusableAnswer || err instanceof CarrierTimeout ? err.message : "the connection failed while reading the answer";
      failures.push({ provider, kind: "failed", status: call.response.status, reason });
    } finally {
      call.answered();
    }
  }
  throw exhaustedError(failures, label);
}

/** The status an attempt that ended without a usable answer is recorded with (endpoint health counts it as down). */
function noAnswerStatus(err: unknown): number {
  return err instanceof CarrierTimeout ? TIMEOUT_STATUS : UNREACHABLE_STATUS;
}
