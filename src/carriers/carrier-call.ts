import type { Env } from "../env";
import type { PricedEndpoint } from "../catalog/catalog";
import { carrierSecret } from "../catalog/carrier-secret";
import type { Settings } from "../settings";
import type { ChatRequest } from "../request/chat-request";
import { carrierProtocol } from "../protocols/outbound";
import { carrierHeaders } from "./carrier-headers";
import type { AccountKeys } from "./carrier-keys";

/**
 * How this deployment reaches carriers: its env (the carriers' secrets) and the settings a call reads,
 * read once per request where it opens; and the account's own carrier keys where the request may use them
 * (completions: docs/byok.md).
 */
export type CarrierAccess = { env: Env; settings: Pick<Settings, "CARRIER_TIMEOUT_MS" | "CARRIER_BASE_URL_OVERRIDE">; account?: AccountKeys };

/** The carrier's base URL; locally every carrier is played by the simulator. */
function carrierBase({ settings }: CarrierAccess, endpoint: PricedEndpoint): string {
  const override = settings.CARRIER_BASE_URL_OVERRIDE;
  return override ? `${override.replace(/\/$/, "")}/${endpoint.provider}${carrierProtocol(endpoint).basePath}` : endpoint.providerEntry.base_url;
}

/** The carrier's completion URL in its protocol. */
function carrierUrl(access: CarrierAccess, endpoint: PricedEndpoint, stream: boolean): string {
  return carrierProtocol(endpoint).url(carrierBase(access, endpoint), endpoint, stream);
}

/** One attempt as it goes on the wire: the body, headers this request needs beyond the protocol's own, and its URL when not the completion URL (embeddings). */
export type WireRequest = { body: string; headers: Record<string, string> | null; url?: (base: string) => string };

/**
 * Each attempt's body in its carrier's protocol (src/protocols/outbound/), with the headers it needs. A
 * protocol prepares the caller's fields (up to 4 MiB) once per request, not once per attempt — once per
 * completion cap where the router set one (`caps`: the caller set none, and the balance pays for no more;
 * it goes as `max_tokens`, which each protocol sends in its own form).
 */
export function carrierBodies(
  body: ChatRequest,
  stream: boolean,
  userHash: string | null,
  caps: ReadonlyMap<PricedEndpoint, number> = new Map(),
): (endpoint: PricedEndpoint) => WireRequest {
  const prepared = new Map<string, (endpoint: PricedEndpoint) => string>();
  return (endpoint) => {
    const protocol = carrierProtocol(endpoint);
    const cap = caps.get(endpoint);
    const asked = cap === undefined ? body : { ...body, max_tokens: cap };
    const key = cap === undefined ? protocol.name : `${protocol.name} ${cap}`;
    let bodyFor = prepared.get(key);
    if (!bodyFor) prepared.set(key, (bodyFor = protocol.bodies(asked, stream, userHash)));
    return { body: bodyFor(endpoint), headers: protocol.requestHeaders(asked, endpoint) };
  };
}

export type CarrierCall = {
  response: Response;
  /** Aborts the upstream request (client gone, timeout). */
  abort: (reason?: unknown) => void;
  signal: AbortSignal;
  /** The answer is in (or given up on): stops the carrier timeout. */
  answered: () => void;
  /** The caller leaving no longer aborts the call by itself: the stream relay decides (it may read on for the usage). */
  detach: () => void;
};

/**
 * Sends one attempt to one carrier. Resolves with the response once its headers arrive; rejects on
 * timeout or network error. The timeout keeps running (aborting the call) until `answered()`, so one
 * timer bounds the headers and the body read. The caller owns the body and must abort on give-up.
 * `key` is the platform's unless the caller passes the account's own.
 */
export async function callCarrier(
  access: CarrierAccess,
  endpoint: PricedEndpoint,
  wire: WireRequest,
  stream: boolean,
  clientSignal?: AbortSignal,
  key: string | undefined = carrierSecret(access.env, endpoint.provider),
): Promise<CarrierCall | "not_configured"> {
  if (!key) return "not_configured";
  const controller = new AbortController();
  // The caller going away ends the upstream request too: no orphaned carrier work.
  const callerGone = () => controller.abort(clientSignal?.reason);
  clientSignal?.addEventListener("abort", callerGone, { once: true });
  const timer = setTimeout(() => controller.abort(new CarrierTimeout()), access.settings.CARRIER_TIMEOUT_MS);
  try {
    const response = await fetch(wire.url ? wire.url(carrierBase(access, endpoint)) : carrierUrl(access, endpoint, stream), {
      method: "POST",
      headers: wire.headers ? { ...carrierHeaders(endpoint, key), ...wire.headers } : carrierHeaders(endpoint, key),
      body: wire.body,
      signal: controller.signal,
    });
    return {
      response,
      abort: (reason) => controller.abort(reason),
      signal: controller.signal,
      answered: () => clearTimeout(timer),
      detach: () => clientSignal?.removeEventListener("abort", callerGone),
    };
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
