import { chatRequestSchema } from "./chat-request";

/**
 * The chat request fields this router knows beyond its own schema's (src/request/chat-request.ts): the
 * rest of the contract's ChatRequest, and the OpenAI Chat Completions fields OpenAI-style carriers take
 * (sent on as they are). Any other field is passed on as sent too, but named back to the caller: a typo
 * (`temprature`) would otherwise be billed silently with the carrier's default.
 */
const KNOWN_ELSEWHERE = [
  // The contract's ChatRequest, not type-checked here.
  "image_config",
  "prompt_cache_options",
  // OpenAI Chat Completions (and OpenRouter's documented extras) that carriers read.
  "include_reasoning",
  "web_search_options",
  "verbosity",
  "store",
  "audio",
  "functions",
  "function_call",
  "safety_identifier",
  "prompt_cache_retention",
  "structured_outputs",
];

const KNOWN = new Set<string>([...Object.keys(chatRequestSchema.shape), ...KNOWN_ELSEWHERE]);

/**
 * The top-level fields of a chat request this router does not know, in the order sent; each name as a
 * response header can carry it (at most 64 characters, any but letters, digits and `_.-` as `?`).
 */
export function unknownFields(json: Record<string, unknown>): string[] {
  return Object.keys(json)
    .filter((k) => !KNOWN.has(k))
    .map((k) => k.slice(0, 64).replace(/[^\w.-]/g, "?"));
}

/** At most `most` of those names (UNKNOWN_PARAMETERS_NAMED), then how many more: "(N more)". */
export function namedUnknown(names: string[], most: number): string[] {
  return names.length > most ? [...names.slice(0, most), `(${names.length - most} more)`] : names;
}
