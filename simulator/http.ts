// HTTP helpers shared by the simulators (carriers, Stripe): their routes, control routes and CLIs.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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

/**
 * How long an idle kept-alive connection stays open. Node closes one after 5 s; real APIs keep theirs far
 * longer (behind Cloudflare or a cloud load balancer, a minute or more). With Node's 5 s a client that reuses
 * a pooled connection just as the server closes it loses the request ("Network connection lost") — a race
 * no real carrier shows at that rate, which failed tests on a busy machine.
 */
export const IDLE_KEEP_ALIVE_MS = 120_000;

/**
 * Listens on host:port (0 = any free port), with real APIs' idle keep-alive, and resolves with the URL
 * and port, or rejects with the listen error.
 */
export async function listen(server: Server, port: number, host: string): Promise<{ url: string; port: number }> {
  server.keepAliveTimeout = IDLE_KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return { url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`, port: bound };
}

/** A CLI's shutdown: SIGINT or SIGTERM closes the server and exits; a second signal exits at once. */
export function exitOnSignals(close: () => Promise<void>): void {
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1); // A second signal means "now".
    stopping = true;
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
