// A local OpenTelemetry collector, as far as traces go: OTLP/HTTP `POST /v1/traces` in JSON or protobuf, the
// spans kept in memory for tests and for a look under `npm start`; and a webhook sink (`/webhooks/…`) for
// webhook destinations. Node-only; never part of the Worker bundle.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listen, sendJson } from "../http";
import { decodeTraceExport } from "./proto-read";

/** One span as received, in the OTLP/JSON shape, with how it came. */
export type ReceivedSpan = {
  span: Record<string, unknown>;
  resource: unknown;
  scope: unknown;
  encoding: "json" | "protobuf";
  /** The request's `authorization` header, if any: what a destination's configured headers sent. */
  authorization: string | null;
};

/** One call to a webhook path (`/webhooks/…`): what a webhook destination sent, as sent. */
export type ReceivedWebhook = { path: string; method: string; body: string; signature: string | null; authorization: string | null };

export type OtlpReceiver = {
  /** "http://127.0.0.1:<port>"; the traces endpoint is `${url}/v1/traces`. */
  url: string;
  port: number;
  spans(): ReceivedSpan[];
  webhooks(): ReceivedWebhook[];
  clear(): void;
  /** The next `count` exports are answered `status` (a collector that is down), then it accepts again. */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
};

export type OtlpReceiverOptions = { port?: number; host?: string };

/** The largest export accepted, as a collector's default receive limit would. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

async function readBytes(req: IncomingMessage): Promise<Buffer | "too_large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return "too_large";
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function startOtlpReceiver(opts: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const hooks: ReceivedWebhook[] = [];
  const failing = { count: 0, status: 503 };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://otlp.invalid");
    const method = req.method ?? "GET";
    if (method === "POST" && url.pathname === "/v1/traces") {
      const body = await readBytes(req);
      if (body === "too_large") return sendJson(res, 413, JSON.stringify({ message: "export too large" }));
      if (failing.count > 0) {
        failing.count--;
        return sendJson(res, failing.status, JSON.stringify({ message: "collector unavailable (simulated)" }));
      }
      const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
      const encoding = type === "application/json" ? "json" : type === "application/x-protobuf" ? "protobuf" : null;
      if (!encoding) return sendJson(res, 415, JSON.stringify({ message: "Content-Type must be application/json or application/x-protobuf" }));
      let parsed: { resourceSpans?: unknown };
      try {
        parsed = encoding === "json" ? (JSON.parse(body.toString("utf8")) as { resourceSpans?: unknown }) : decodeTraceExport(body);
      } catch (err) {
        return sendJson(res, 400, JSON.stringify({ message: `unreadable export: ${String(err)}` }));
      }
      const authorization = typeof req.headers.authorization === "string" ? req.headers.authorization : null;
      for (const rs of (parsed.resourceSpans ?? []) as Array<{ resource?: unknown; scopeSpans?: Array<{ scope?: unknown; spans?: unknown[] }> }>)
        for (const ss of rs.scopeSpans ?? [])
          for (const span of ss.spans ?? [])
            received.push({ span: span as Record<string, unknown>, resource: rs.resource, scope: ss.scope, encoding, authorization });
      // ExportTraceServiceResponse, empty: every span accepted.
      if (encoding === "json") return sendJson(res, 200, "{}");
      res.writeHead(200, { "content-type": "application/x-protobuf", "content-length": "0" });
      res.end();
      return;
    }
    if ((method === "POST" || method === "PUT") && url.pathname.startsWith("/webhooks/")) {
      const body = await readBytes(req);
      if (body === "too_large") return sendJson(res, 413, JSON.stringify({ message: "body too large" }));
      const header = (name: string) => (typeof req.headers[name] === "string" ? (req.headers[name] as string) : null);
      hooks.push({
        path: url.pathname,
        method,
        body: body.toString("utf8"),
        signature: header("switchyard-signature"),
        authorization: header("authorization"),
      });
      return sendJson(res, 200, "{}");
    }
    if (method === "GET" && url.pathname === "/_sim/webhooks") return sendJson(res, 200, JSON.stringify({ webhooks: hooks }));
    if (method === "GET" && url.pathname === "/_sim/spans") return sendJson(res, 200, JSON.stringify({ spans: received }));
    if (method === "DELETE" && url.pathname === "/_sim/spans") {
      received.length = 0;
      return sendJson(res, 200, JSON.stringify({ ok: true }));
    }
    if (method === "GET" && url.pathname === "/health") return sendJson(res, 200, JSON.stringify({ ok: true }));
    sendJson(res, 404, JSON.stringify({ message: `no route ${method} ${url.pathname}` }));
  };
  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, JSON.stringify({ message: `receiver error: ${String(err)}` }));
      else res.destroy();
    });
  });
  const { url, port } = await listen(server, opts.port ?? 0, opts.host ?? "127.0.0.1");
  return {
    url,
    port,
    spans: () => [...received],
    webhooks: () => [...hooks],
    clear: () => void (received.length = 0),
    failNext: (count, status = 503) => Object.assign(failing, { count, status }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
