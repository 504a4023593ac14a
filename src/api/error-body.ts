import { openAiChat } from "../protocols/inbound/openai-chat";

/** The OpenAI/OpenRouter error body (`{"error":{"code":status,"message":…}}`): what /api/v1 and /admin answer errors with. */
export function errorBody(status: number, message: string, metadata?: Record<string, unknown>): unknown {
  return openAiChat.errorBody({ status: status as never, message, metadata });
}
