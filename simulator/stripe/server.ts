// A local Stripe: the part of Stripe's API, hosted Checkout page and webhooks that a Checkout
// integration uses, wire-compatible with the official SDK (pointed at it by host/port/protocol).
// Node-only and in memory; never part of the Worker bundle.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listen, readBody, sendJson } from "../http";
import { serveApi } from "./api";
import { servePage } from "./checkout-page";
import { expireDue } from "./checkout";
import { serveControl } from "./controls";
import { errorPayload, unrecognizedUrl } from "./errors";
import { IdempotencyKeys } from "./idempotency";
import { newId } from "./ids";
import { Store } from "./store";
import { Webhooks } from "./webhooks";

export { stripeSignature } from "./signature";
export type { DeliveryAttempt, OutboxEvent } from "./webhooks";

export type StripeSimulatorOptions = {
  /** 0 (the default) picks an ephemeral port. */
  port?: number;
  /** Default "127.0.0.1". */
  host?: string;
  /** "whsec_…": signs every event. */
  webhookSecret: string;
  /** When set, events are POSTed there; change it later with setWebhookUrl. */
  webhookUrl?: string;
  /** Accepted secret keys start with this; default "sk_test_". */
  apiKeyPrefix?: string;
  /** Delivery attempts per event (default 5), the first retry's delay (default 100 ms, doubling), and each POST's timeout (default 10 s). */
  webhookAttempts?: number;
  webhookBackoffMs?: number;
  webhookTimeoutMs?: number;
};

export type StripeSimulator = {
  /** "http://127.0.0.1:<port>" */
  url: string;
  port: number;
  setWebhookUrl(url: string | undefined): void;
  close(): Promise<void>;
};

// How often sessions past their `expires_at` are expired (Stripe does it on its own, events included).
const EXPIRY_SWEEP_MS = 1000;

export async function startStripeSimulator(opts: StripeSimulatorOptions): Promise<StripeSimulator> {
  if (typeof opts.webhookSecret !== "string" || opts.webhookSecret === "") throw new Error("webhookSecret is required");
  const host = opts.host ?? "127.0.0.1";
  const webhooks = new Webhooks({
    secret: opts.webhookSecret,
    url: opts.webhookUrl,
    attempts: Math.max(1, opts.webhookAttempts ?? 5),
    backoffMs: Math.max(0, opts.webhookBackoffMs ?? 100),
    timeoutMs: Math.max(1, opts.webhookTimeoutMs ?? 10_000),
  });
  const keys = new IdempotencyKeys();
  let store: Store | undefined; // made once the port (and so the page URLs) is known

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://stripe.invalid");
    const raw = await readBody(req);
    if (typeof raw === "string") {
      if (raw === "too_large") sendJson(res, 413, JSON.stringify(errorPayload({ type: "invalid_request_error", message: "Request body too large." })));
      return;
    }
    expireDue(store!);
    const method = req.method ?? "GET";
    if (url.pathname.startsWith("/v1/")) {
      store!.recordCall(method, url.pathname);
      return serveApi(req, res, url, raw.text, { store: store!, keys, apiKeyPrefix: opts.apiKeyPrefix ?? "sk_test_" });
    }
    const pay = /^\/c\/pay\/([^/]+)$/.exec(url.pathname);
    if (pay && (method === "GET" || method === "POST")) return servePage(req, res, store!, decodeURIComponent(pay[1]!), raw.text);
    if (url.pathname.startsWith("/_sim/")) return serveControl(method, url, raw.text, res, { store: store!, webhooks, keys });
    if (method === "GET" && url.pathname === "/health") return sendJson(res, 200, JSON.stringify({ ok: true }));
    res.setHeader("Request-Id", newId("req"));
    sendJson(res, 404, JSON.stringify(errorPayload(unrecognizedUrl(method, url.pathname).body)));
  };
  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      // A bug in the simulator must show up as a 500, not a crashed test run.
      if (!res.headersSent) sendJson(res, 500, JSON.stringify(errorPayload({ type: "api_error", message: `simulator error: ${String(err)}` })));
      else res.destroy();
    });
  });
  const { url, port } = await listen(server, opts.port ?? 0, host);
  store = new Store(url, (event) => webhooks.publish(event));
  const sweep = setInterval(() => expireDue(store), EXPIRY_SWEEP_MS);
  sweep.unref();
  return {
    url,
    port,
    setWebhookUrl: (next) => webhooks.setUrl(next),
    close: () =>
      new Promise<void>((resolve, reject) => {
        clearInterval(sweep);
        webhooks.stop();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
