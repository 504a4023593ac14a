import type { PricedEndpoint } from "../../catalog/catalog";
import type { CarrierProtocolName } from "../../catalog/schema";
import type { CarrierProtocol } from "./carrier-protocol";
import { openAiChat } from "./openai-chat";
import { anthropicMessages } from "./anthropic";
import { gemini } from "./gemini";
import { openAiResponses } from "./openai-responses";

export type { CarrierProtocol } from "./carrier-protocol";

/**
 * Every carrier protocol, by the name the catalog gives it: a new one is a folder beside these, one line here
 * and its name in the catalog's list (src/catalog/carrier-protocol-names.ts), which types this table.
 */
export const CARRIER_PROTOCOLS: Record<CarrierProtocolName, CarrierProtocol> = {
  "openai-chat": openAiChat,
  "anthropic-messages": anthropicMessages,
  gemini,
  "openai-responses": openAiResponses,
};

/** The protocol an endpoint is called in: its own catalog `protocol`, else its carrier's. */
export function carrierProtocol(endpoint: PricedEndpoint): CarrierProtocol {
  return CARRIER_PROTOCOLS[endpoint.protocol ?? endpoint.providerEntry.protocol];
}
