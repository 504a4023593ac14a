// HTTP helpers shared by the carrier routes and the `/__sim/*` control routes.
import type { IncomingMessage, ServerResponse } from "node:http";

export type Json = Record<string, unknown>;

const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function isRecord(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function errorJson(status: number, message: string, type: string): string {
  return JSON.stringify({ error: { message, type, code: status } });
}

export function sendJson(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/** Reads the whole body; "too_large" past the limit, "aborted" if the client went away. */
export async function readBody(req: IncomingMessage): Promise<{ text: string } | "too_large" | "aborted"> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > MAX_BODY_BYTES) return "too_large";
      chunks.push(buf);
    }
  } catch {
    return "aborted";
  }
  return { text: Buffer.concat(chunks).toString("utf8") };
}
