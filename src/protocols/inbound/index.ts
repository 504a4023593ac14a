import type { CallerProtocol } from "./caller-protocol";
import type { InboundApiEntry } from "./inbound-api";
import { openAiChat } from "./openai-chat";
import { anthropicMessagesCaller } from "./anthropic-messages";
import { openAiResponses } from "./openai-responses";
import { embeddings } from "./embeddings";

export type { CallerProtocol } from "./caller-protocol";
export type { InboundApiEntry, InboundRoute } from "./inbound-api";

/**
 * Every caller protocol, by name: a new one is a folder beside openai-chat/ and one line here. Its routes,
 * its record's `inbound_api` and its wrong-path hints are its own (./inbound-api.ts): src/api/model-routes.ts
 * mounts every one registered here.
 */
export const CALLER_PROTOCOLS = {
  "openai-chat": openAiChat,
  "anthropic-messages": anthropicMessagesCaller,
  "openai-responses": openAiResponses,
} satisfies Record<string, CallerProtocol<string>>;

/** The inbound APIs with a request path of their own (not a caller protocol's: src/serve/serve-embeddings.ts), by name; mounted as the caller protocols are. */
export const OWN_PATH_APIS = {
  embeddings,
} satisfies Record<string, InboundApiEntry<string>>;

/** Every inbound API, caller protocols first, in the order their routes are mounted. */
export const INBOUND_APIS: readonly InboundApiEntry[] = [...Object.values(CALLER_PROTOCOLS), ...Object.values(OWN_PATH_APIS)];

/** The API the router answers in where the caller spoke none of the others (the catalog and key routes, /admin, a wrong path no API claims): OpenRouter's. */
export const HOUSE_API: InboundApiEntry = CALLER_PROTOCOLS["openai-chat"];

type Registered = (typeof CALLER_PROTOCOLS)[keyof typeof CALLER_PROTOCOLS] | (typeof OWN_PATH_APIS)[keyof typeof OWN_PATH_APIS];

/** The API a caller spoke, as the generation record names it (`inbound_api`): one per registered inbound API. */
export type InboundApiName = Registered["api"];
