import type { ChatRequest } from "./chat-request";

/** Which of `fields` the request sets (not null, and `n` only above 1): what a protocol without them leaves out. */
export function presentFields(body: ChatRequest, fields: readonly string[]): string[] {
  const b = body as Record<string, unknown>;
  return fields.filter((f) => b[f] !== undefined && b[f] !== null && !(f === "n" && b[f] === 1) && !(f === "logprobs" && b[f] === false));
}
