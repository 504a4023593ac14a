import type { CallerProtocol } from "./caller-protocol";
import { openAiChat } from "./openai-chat";
import { anthropicMessagesCaller } from "./anthropic-messages";
import { openAiResponses } from "./openai-responses";

export type { CallerProtocol } from "./caller-protocol";

/** Every caller protocol, by name: a new one is a folder beside openai-chat/ and one line here. */
export const CALLER_PROTOCOLS = {
  "openai-chat": openAiChat,
  "anthropic-messages": anthropicMessagesCaller,
  "openai-responses": openAiResponses,
} satisfies Record<string, CallerProtocol>;
