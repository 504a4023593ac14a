import type { PricedEndpoint } from "../../catalog/catalog";
import type { CarrierProtocol } from "./carrier-protocol";
import { openAiCompatible } from "./openai-compatible";

export type { CarrierProtocol } from "./carrier-protocol";

/** Every carrier protocol, by name: a new one is a file beside these and one line here. */
const CARRIER_PROTOCOLS: Record<string, CarrierProtocol> = {
  "openai-compatible": openAiCompatible,
};

/** The protocol an endpoint's carrier speaks (every catalog carrier speaks OpenAI's today). */
export function carrierProtocol(_endpoint: PricedEndpoint): CarrierProtocol {
  return CARRIER_PROTOCOLS["openai-compatible"]!;
}
