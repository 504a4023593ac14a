import type * as z from "zod";
import { readBodyLimited } from "../http/read-limited";
import { ApiError } from "./errors";

/** Largest body of a model request (completions in any protocol, embeddings), in bytes: 413 above it. */
export const MAX_MODEL_REQUEST_BYTES = 4 * 1024 * 1024;

/** A model request's body as a JSON object, within MAX_MODEL_REQUEST_BYTES. */
export function readModelRequest(req: Request): Promise<{ json: Record<string, unknown>; bytes: number }> {
  return readJsonObject(req, MAX_MODEL_REQUEST_BYTES);
}

/**
 * A request's body as a JSON object: 413 over `maxBytes` (the rest stays unread for the app's drain,
 * src/http/drain-body.ts, so the 413 reaches the client), 400 when it is not JSON or not an object.
 */
export async function readJsonObject(req: Request, maxBytes: number): Promise<{ json: Record<string, unknown>; bytes: number }> {
  const read = await readBodyLimited(req, maxBytes, { keepUnread: true });
  if (read === "too_large")
    throw new ApiError(413, `Request body too large: the limit is ${maxBytes} bytes${maxBytes >= 1024 * 1024 ? ` (${maxBytes / 1024 / 1024} MiB)` : ""}.`);
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch {
    throw new ApiError(400, "The request body is not valid JSON.");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new ApiError(400, "The request body must be a JSON object.");
  return { json: json as Record<string, unknown>, bytes: read.bytes };
}

/** The 400 for input zod refused, naming the first problem and where it is. */
export function invalidInput(error: z.ZodError): ApiError {
  const issue = error.issues[0]!;
  const where = issue.path.length ? `\`${issue.path.join(".")}\`: ` : "";
  return new ApiError(400, `Invalid request: ${where}${issue.message}`);
}
