import * as z from "zod";
import { ApiError } from "./errors";
import { readBodyLimited } from "../http/read-limited";

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

/** The fields the router reads; every other field passes to the carrier unchanged. */
export const chatRequestSchema = z
  .object({
    messages: z.array(message).min(1, "messages must be a non-empty array").max(MAX_MESSAGES, `at most ${MAX_MESSAGES} messages are accepted`),
    model: z.string().min(1).max(256).optional(),
    stream: z.boolean().optional(),
    max_tokens: z.int().positive().nullish(),
    max_completion_tokens: z.int().positive().nullish(),
  })
  .loose();

export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** Reads and validates the body: 413 when too large, 400 when not JSON or not a chat request. */
export async function readChatRequest(req: Request): Promise<{ body: ChatRequest; bytes: number }> {
  // The rest of an oversized body stays unread for the app's drain (src/http/drain-body.ts), so the 413 reaches the client.
  const read = await readBodyLimited(req, MAX_BODY_BYTES, { keepUnread: true });
  if (read === "too_large") throw tooLarge();
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch {
    throw new ApiError(400, "The request body is not valid JSON.");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new ApiError(400, "The request body must be a JSON object.");
  if (!("messages" in json)) throw new ApiError(400, "`messages` is required: a non-empty array of {role, content}.");
  const parsed = chatRequestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? `\`${issue.path.join(".")}\`: ` : "";
    throw new ApiError(400, `Invalid request: ${where}${issue.message}`);
  }
  return { body: parsed.data, bytes: read.bytes };
}

function tooLarge() {
  return new ApiError(413, `Request body too large: the limit is ${MAX_BODY_BYTES} bytes (${MAX_BODY_BYTES / 1024 / 1024} MiB).`);
}
