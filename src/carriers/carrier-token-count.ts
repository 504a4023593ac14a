import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "../request/chat-request";
import { Untranslatable } from "../request/errors";
import { REJECTIONS } from "../db/carrier-attempt";
import { carrierProtocol } from "../protocols/outbound";
import { callCarrier, CarrierTimeout, type CarrierAccess } from "./carrier-call";
import { carrierReason, readTextLimited } from "./attempts";

/** Largest token-count answer read (Anthropic's is `{"input_tokens": N}`). */
const MAX_COUNT_ANSWER_BYTES = 64 * 1024;

/**
 * What the carrier's token count came to: its count; a rejection of the caller's input (400, 413, 422,
 * or a prompt the protocol cannot express), with the status and the carrier's reason; or a failure of
 * the carrier's own (any other status, no answer in time, an unusable answer, not configured).
 */
export type CarrierTokenCount = { tokens: number } | { rejected: { status: 400 | 413 | 422; reason: string } } | { failed: string };

/**
 * One token count at the endpoint's carrier (its protocol's `tokenCount`), within CARRIER_TIMEOUT_MS.
 * Not a completion: no attempt is logged and endpoint health does not see it.
 */
export async function carrierTokenCount(access: CarrierAccess, endpoint: PricedEndpoint, body: ChatRequest, signal: AbortSignal): Promise<CarrierTokenCount> {
  const protocol = carrierProtocol(endpoint);
  const counter = protocol.tokenCount;
  if (!counter) return { failed: `${endpoint.providerEntry.name} has no token count` };
  let wire: string;
  try {
    wire = counter.body(body, endpoint);
  } catch (err) {
    if (err instanceof Untranslatable) return { rejected: { status: 400, reason: err.message } };
    throw err;
  }
  let call;
  try {
    call = await callCarrier(
      access,
      endpoint,
      { body: wire, headers: protocol.requestHeaders(body, endpoint), url: (base) => counter.url(base) },
      false,
      signal,
    );
  } catch (err) {
    return { failed: err instanceof CarrierTimeout ? err.message : "the carrier could not be reached" };
  }
  if (call === "not_configured") return { failed: "the carrier is not configured" };
  try {
    const { status } = call.response;
    if (status !== 200) {
      const reason = await carrierReason(call.response);
      return REJECTIONS.has(status) ? { rejected: { status: status as 400 | 413 | 422, reason } } : { failed: reason };
    }
    const tokens = counter.answer(JSON.parse(await readTextLimited(call.response, MAX_COUNT_ANSWER_BYTES)));
    return tokens === null ? { failed: "the carrier's answer had no token count" } : { tokens };
  } catch (err) {
    call.abort();
    return {
      failed:
        err instanceof CarrierTimeout || call.signal.reason instanceof CarrierTimeout ? new CarrierTimeout().message : "the carrier's answer was unusable",
    };
  } finally {
    call.answered();
  }
}
