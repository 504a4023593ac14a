import { HOUSE_API } from "../protocols/inbound";

/** The OpenAI/OpenRouter error body (`{"error":{"code":status,"message":…}}`): what /api/v1 and /admin answer errors with. */
export function errorBody(status: number, message: string, metadata?: Record<string, unknown>): unknown {
  return HOUSE_API.errorBody({ status: status as never, message, metadata });
}
