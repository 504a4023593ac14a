import type { PricedEndpoint } from "../../catalog/catalog";
import type { CarrierProtocol } from "./carrier-protocol";
import { openAiChat } from "./openai-chat";
import { anthropicMessages } from "./anthropic";
import { gemini } from "./gemini";
import { openAiResponses } from "./openai-responses";

export type { CarrierProtocol } from "./carrier-protocol";

/**
 * Every carrier protocol, by the name the catalog gives it (a carrier's or an endpoint's `protocol`): a
 * new one is a folder beside these and one line here. The catalog refuses a name that is not here when it
 * is loaded (src/catalog/load.ts is handed these names).
 */
export const CARRIER_PROTOCOLS = {
  "openai-chat": openAiChat,
  "anthropic-messages": anthropicMessages,
  gemini,
  "openai-responses": openAiResponses,
} as const satisfies Record<string, CarrierProtocol>;

/** The protocol of a carrier whose catalog entry names none. */
const DEFAULT_PROTOCOL: CarrierProtocol = CARRIER_PROTOCOLS["openai-chat"];

const byName: ReadonlyMap<string, CarrierProtocol> = new Map(Object.entries(CARRIER_PROTOCOLS));

/** The registered protocols' names: what a catalog may name (src/catalog/load.ts). */
export const CARRIER_PROTOCOL_NAMES: ReadonlySet<string> = new Set(byName.keys());

/**
 * The protocol an endpoint is called in: its own catalog `protocol`, else its carrier's, else the default.
 * A loaded catalog names only registered protocols, so a miss is a catalog built without that check.
 */
export function carrierProtocol(endpoint: PricedEndpoint): CarrierProtocol {
  const name = endpoint.protocol ?? endpoint.providerEntry.protocol;
  if (name === undefined) return DEFAULT_PROTOCOL;
  const protocol = byName.get(name);
  if (!protocol) throw new Error(`catalog: carrier ${endpoint.provider} names the carrier protocol "${name}", which is not registered`);
  return protocol;
}
