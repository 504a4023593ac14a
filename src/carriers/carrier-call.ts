import type { Env } from "../env";
import type { PricedEndpoint } from "../catalog/catalog";
import { carrierSecret } from "./carrier-secret";
import { settings } from "../settings";
import { carrierView } from "../request/router-fields";

export function carrierTimeoutMs(env: Env): number {
  return settings(env).CARRIER_TIMEOUT_MS;
}

/** The carrier's chat completions URL; locally every carrier is played by the simulator. */
export function carrierUrl(env: Env, endpoint: PricedEndpoint): string {
  const override = settings(env).CARRIER_BASE_URL_OVERRIDE;
  const base = override ? `${override.replace(/\/$/, "")}/${endpoint.provider}/v1` : endpoint.providerEntry.base_url;
  return `${base.replace(/\/$/, "")}/chat/completions`;
}

/**
 * The bodies sent upstream: the caller's, without the router's fields and with `user` as its hash
 * (`carrierView`), `model` set to each carrier's id and usage asked for on streams. The caller's fields
 * (up to 4 MiB) are prepared and serialized once per request, not once per attempt; each attempt only
 * puts its model id in front of that text.
 */
export function carrierBodies(body: Record<string, unknown>, stream: boolean, userHash: string | null): (endpoint: PricedEndpoint) => string {
  const { model: _requested, ...rest } = carrierView(body, userHash);
  if (stream) {
    const options = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
    rest.stream_options = { ...options, include_usage: true };
  }
  const fields = JSON.stringify(rest); // "{…}"; a chat request always has messages, so never "{}"
  return (endpoint) => `{"model":${JSON.stringify(endpoint.upstream_model)},${fields.slice(1)}`;
}

export type CarrierCall = {
  response: Response;
  /** Aborts the upstream request (client gone, timeout). */
  abort: (reason?: unknown) => void;
  signal: AbortSignal;
  /** The answer is in (or given up on): stops the carrier timeout. */
  answered: () => void;
};

/**
 * Sends one attempt to one carrier. Resolves with the response once its headers arrive; rejects on
 * timeout or network error. The timeout keeps running (aborting the call) until `answered()`, so one
 * timer bounds the headers and the body read. The caller owns the body and must abort on give-up.
 */
export async function callCarrier(env: Env, endpoint: PricedEndpoint, body: string, clientSignal?: AbortSignal): Promise<CarrierCall | "not_configured"> {
  const key = carrierSecret(env, endpoint.provider);
  if (!key) return "not_configured";
  const controller = new AbortController();
  // The caller going away ends the upstream request too: no orphaned carrier work.
  clientSignal?.addEventListener("abort", () => controller.abort(clientSignal.reason), { once: true });
  const timer = setTimeout(() => controller.abort(new CarrierTimeout()), carrierTimeoutMs(env));
  try {
    const response = await fetch(carrierUrl(env, endpoint), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, accept: "application/json, text/event-stream" },
      body,
      signal: controller.signal,
    });
    return { response, abort: (reason) => controller.abort(reason), signal: controller.signal, answered: () => clearTimeout(timer) };
  } catch (err) {
    clearTimeout(timer);
    if (controller.signal.aborted && controller.signal.reason instanceof CarrierTimeout) throw controller.signal.reason;
    throw err;
  }
}

export class CarrierTimeout extends Error {
  constructor() {
    super("the carrier did not respond in time");
  }
}
