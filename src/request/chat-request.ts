import * as z from "zod";
import { ApiError } from "./errors";
import { invalidInput } from "./json-body";
import { routerFieldsShape } from "./router-field-schemas";
import { standardParametersShape } from "./standard-parameters";
import { providerPreferences } from "./provider-preferences";
import { sparseParser } from "./sparse-parse";

/** Most messages accepted in one request (400 above it). */
export const MAX_MESSAGES = 2048;

const contentPart = z.object({ type: z.string() }).loose();
const message = z
  .object({
    role: z.string().min(1, "role must be a non-empty string"),
    content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  })
  .loose();

/**
 * The fields the router reads, its own routing fields included (never sent upstream: src/routing/router-fields.ts),
 * and the type checks of the standard parameters (src/api/standard-parameters.ts); every field but the
 * router's passes to the carrier unchanged.
 */
export const chatRequestSchema = z
  .object({
    messages: z.array(message).min(1, "messages must be a non-empty array").max(MAX_MESSAGES, `at most ${MAX_MESSAGES} messages are accepted`),
    model: z.string().min(1).max(256).optional(),
    stream: z.boolean().optional(),
    max_tokens: z.int().positive().nullish(),
    max_completion_tokens: z.int().positive().nullish(),
    ...standardParametersShape,
    ...routerFieldsShape,
    provider: providerPreferences,
  })
  .loose();

export type ChatRequest = z.infer<typeof chatRequestSchema>;

const parseFields = sparseParser(chatRequestSchema);

/** Validates a chat request's JSON object: 400 naming the first problem. */
export function parseChatRequest(json: Record<string, unknown>): ChatRequest {
  if (!("messages" in json)) throw new ApiError(400, "`messages` is required: a non-empty array of {role, content}.");
  const parsed = parseFields(json);
  if (!parsed.success) throw invalidInput(parsed.error);
  return parsed.data;
}
