import * as z from "zod";
import { ApiError } from "./errors";
import { invalidInput, readJsonObject } from "./json-body";
import { routerFieldsShape } from "../routing/router-field-schemas";
import { standardParametersShape } from "./standard-parameters";
import { providerPreferences } from "../routing/provider-preferences";

/** Largest request body accepted, in bytes (413 above it). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
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

/** Reads and validates the body: 413 when too large, 400 when not JSON or not a chat request. */
export async function readChatRequest(req: Request): Promise<{ body: ChatRequest; bytes: number }> {
  const { json, bytes } = await readJsonObject(req, MAX_BODY_BYTES);
  if (!("messages" in json)) throw new ApiError(400, "`messages` is required: a non-empty array of {role, content}.");
  const parsed = chatRequestSchema.safeParse(json);
  if (!parsed.success) throw invalidInput(parsed.error);
  return { body: parsed.data, bytes };
}
