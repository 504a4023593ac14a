import type { PricedEndpoint } from "../catalog/catalog";
import { callCarrier, CarrierTimeout, type CarrierAccess, type CarrierCall, type WireRequest } from "./carrier-call";
import { carrierReason, classifyStatus, exhaustedError, type AttemptFailure } from "./attempts";
import type { AttemptLog } from "./attempt-log";
import { byokServed, KEY_REFUSALS, keyFor, keyTries, type KeyTry } from "./carrier-keys";
import { TIMEOUT_STATUS, UNREACHABLE_STATUS } from "../db/carrier-attempt";
import { Untranslatable } from "../request/errors";

/** Thrown by an `accept` step when a 2xx answer is still unusable (malformed, oversized, not a stream). */
export class UnusableAnswer extends Error {}

/** What served: the endpoint as planned, the request's copy of it that prices its charge (the fee when served with the account's key), the call. */
export type Dispatched<T> = { endpoint: PricedEndpoint; charged: PricedEndpoint; call: CarrierCall; value: T; failures: AttemptFailure[] };

type Attempted<T> = { served: { call: CarrierCall; value: T } } | { failure: AttemptFailure; keyRefused: boolean };

/**
 * Tries the endpoints in order (a model's carriers, then the next fallback model's) until one answers
 * usably. Any error answer moves on: 429, 5xx, timeout, network error, an unusable answer, a carrier's
 * own 4xx (401, 402, 403, 404…), and a rejection of the request (400, 413, 422), which may be that
 * carrier's alone (a parameter it does not take, a shorter context). Nothing has reached the caller
 * while this runs. Every attempt goes to `log`. Throws the caller's ApiError (`exhaustedError`) when
 * none is left; `label` names what was asked for, `skipped` the endpoints left out before any attempt
 * (named first in that error). An endpoint whose carrier the account has its own key for is called
 * with it (docs/byok.md): then with the platform's only when the account allows it and the carrier
 * refused the account's key (401/403/429); such a refusal is noted on the key, not counted in the
 * endpoint's health (`log`), and named in the caller's error should nothing serve.
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
    let wire: WireRequest;
    try {
      wire = bodyFor(endpoint);
    } catch (err) {
      // What this carrier's protocol cannot express: rejected without a call (no health fault).
      if (!(err instanceof Untranslatable)) throw err;
      failures.push({ provider: endpoint.providerEntry.name, kind: "rejected", status: 400, reason: err.message });
      continue;
    }
    for (const t of keyTries(access.account, endpoint)) {
      const a = await attempt(access, endpoint, wire, t, stream, accept, log, clientSignal);
      if ("served" in a) {
        const charged = t.byok && access.account ? byokServed(endpoint, access.account) : endpoint;
        return { endpoint, charged, ...a.served, failures };
      }
      failures.push(a.failure);
      // The platform's key after the account's only when the carrier refused the account's.
      if (!a.keyRefused) break;
    }
  }
  throw exhaustedError(failures, label);
}

/** One call of one endpoint with one key: what served, or why not (and whether the carrier refused the account's key). */
async function attempt<T>(
  access: CarrierAccess,
  endpoint: PricedEndpoint,
  wire: WireRequest,
  t: KeyTry,
  stream: boolean,
  accept: (call: CarrierCall, endpoint: PricedEndpoint) => Promise<T>,
  log: AttemptLog,
  clientSignal: AbortSignal | undefined,
): Promise<Attempted<T>> {
  const provider = endpoint.providerEntry.name;
  const key = await keyFor(access.env, access.account, endpoint, t);
  if (key === undefined && t.byok) {
    const reason = "the account's own key for this carrier cannot be decrypted (its encryption key version is no longer configured); store it again";
    access.account?.refused(t.byok, reason);
    return { failure: { provider, kind: "unavailable", status: null, reason }, keyRefused: true };
  }
  const at = Date.now();
  let call: CarrierCall | "not_configured";
  try {
    call = await callCarrier(access, endpoint, wire, stream, clientSignal, key);
  } catch (err) {
    if (clientSignal?.aborted) throw err;
    log.fail(endpoint, noAnswerStatus(err), at);
    return {
      failure: { provider, kind: "failed", status: null, reason: err instanceof CarrierTimeout ? err.message : "the carrier could not be reached" },
      keyRefused: false,
    };
  }
  // Our configuration, not the carrier's health: no attempt is logged.
  if (call === "not_configured") return { failure: { provider, kind: "unavailable", status: null, reason: "carrier not configured" }, keyRefused: false };
  try {
    if (!call.response.ok) {
      const status = call.response.status;
      // A carrier may quote the key it refused: never the account's key in what is kept or answered.
      const reason = t.byok && key ? (await carrierReason(call.response)).replaceAll(key, "[key]") : await carrierReason(call.response);
      if (t.byok && KEY_REFUSALS.has(status)) {
        // The account's key, not the carrier: noted on the key for the console, kept out of the endpoint's health.
        access.account?.refused(t.byok, reason);
        return { failure: classifyStatus(provider, status, `the account's own key was refused: ${reason}`), keyRefused: true };
      }
      log.fail(endpoint, status, at);
      return { failure: classifyStatus(provider, status, reason), keyRefused: false };
    }
    const value = await accept(call, endpoint);
    log.serve(endpoint, call.response.status, at);
    return { served: { call, value } };
  } catch (err) {
    call.abort();
    if (clientSignal?.aborted) throw err;
    log.fail(endpoint, noAnswerStatus(err), at);
    const reason = err instanceof UnusableAnswer || err instanceof CarrierTimeout ? err.message : "the connection failed while reading the answer";
    return { failure: { provider, kind: "failed", status: call.response.status, reason }, keyRefused: false };
  } finally {
    call.answered();
  }
}

/** The status an attempt that ended without a usable answer is recorded with (endpoint health counts it as down). */
function noAnswerStatus(err: unknown): number {
  return err instanceof CarrierTimeout ? TIMEOUT_STATUS : UNREACHABLE_STATUS;
}
