/**
 * The names of the carrier protocols, for the catalog (a carrier's `protocol`). The catalog validates its
 * carriers below the protocols' layer, so it cannot read their registry (src/protocols/outbound/index.ts):
 * it keeps their names here, the one other place a carrier protocol is named. The registry is typed by
 * these names, so the compiler refuses a name without an adapter and an adapter without a name;
 * test/node/plug-in.test.ts holds both equal and that nothing else in src/ names a protocol.
 */
export const CARRIER_PROTOCOL_NAMES = ["openai-chat", "anthropic-messages", "gemini", "openai-responses"] as const;
export type CarrierProtocolName = (typeof CARRIER_PROTOCOL_NAMES)[number];

/** The protocol of a carrier that names none. */
export const DEFAULT_CARRIER_PROTOCOL: CarrierProtocolName = "openai-chat";

/** The protocols whose prompt caching is explicit (the caller asks with `cache_control`): their carriers cache nothing implicitly. */
export const EXPLICIT_CACHE_PROTOCOLS: readonly CarrierProtocolName[] = ["anthropic-messages"];
