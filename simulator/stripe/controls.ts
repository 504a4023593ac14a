// The simulator's own control API under `/_sim/` (not Stripe's; no auth, JSON in and out): what
// tests use to read the signed events, make webhook delivery misbehave, pay and dispute.
import type { ServerResponse } from "node:http";
import { errorJson, isRecord, sendJson, type Json } from "../http";
import { testCard, type TestCard } from "./cards";
import { paySession } from "./checkout";
import { closeDispute, openDispute, reviewDispute } from "./disputes";
import { ApiError, errorPayload } from "./errors";
import type { IdempotencyKeys } from "./idempotency";
import { failRefund } from "./refunds";
import type { Store } from "./store";
import type { Webhooks } from "./webhooks";

export type ControlContext = { store: Store; webhooks: Webhooks; keys: IdempotencyKeys };

class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function body(text: string): Json {
  let parsed: unknown;
  try {
    parsed = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new ControlError(400, "the body must be JSON");
  }
  if (!isRecord(parsed)) throw new ControlError(400, "the body must be a JSON object");
  return parsed;
}

function card(b: Json): TestCard {
  const number = typeof b.card === "string" ? b.card : "4242424242424242";
  const found = testCard(number);
  if (!found) throw new ControlError(400, `not a test card: ${number}`);
  return found;
}

function setWebhooks(b: Json, ctx: ControlContext): Json {
  if (b.mode !== undefined && b.mode !== "deliver" && b.mode !== "hold") throw new ControlError(400, 'mode must be "deliver" or "hold"');
  if (b.duplicate !== undefined && typeof b.duplicate !== "boolean") throw new ControlError(400, "duplicate must be a boolean");
  if (b.url !== undefined && b.url !== null && typeof b.url !== "string") throw new ControlError(400, "url must be a string or null");
  if (b.mode !== undefined) ctx.webhooks.mode = b.mode;
  if (typeof b.duplicate === "boolean") ctx.webhooks.duplicate = b.duplicate;
  if (b.url !== undefined) ctx.webhooks.setUrl(b.url ?? undefined);
  return { mode: ctx.webhooks.mode, duplicate: ctx.webhooks.duplicate, held: ctx.webhooks.heldCount, url: ctx.webhooks.hasUrl() };
}

async function release(b: Json, ctx: ControlContext): Promise<Json> {
  const order = b.order ?? "fifo";
  if (order !== "fifo" && order !== "reverse") throw new ControlError(400, 'order must be "fifo" or "reverse"');
  if (!ctx.webhooks.hasUrl()) throw new ControlError(409, "no webhook URL is set: nowhere to release the held events to");
  return { released: await ctx.webhooks.release(order) };
}

function pay(id: string, b: Json, ctx: ControlContext): object {
  const c = card(b);
  const now = new Date();
  return paySession(ctx.store, id, {
    card: c,
    expMonth: 12,
    expYear: now.getUTCFullYear() + 5,
    email: typeof b.email === "string" ? b.email : null,
    name: null,
  });
}

function dispute(b: Json, ctx: ControlContext): object {
  if (typeof b.payment_intent !== "string") throw new ControlError(400, "payment_intent is required");
  if (b.amount !== undefined && b.amount !== null && typeof b.amount !== "number") throw new ControlError(400, "amount must be a number of cents");
  if (b.kind !== undefined && b.kind !== "chargeback" && b.kind !== "inquiry") throw new ControlError(400, 'kind must be "chargeback" or "inquiry"');
  return openDispute(ctx.store, b.payment_intent, { amount: typeof b.amount === "number" ? b.amount : undefined, kind: b.kind });
}

const CLOSE_STATUSES = ["won", "lost", "warning_closed", "charge_refunded"];

const MAX_WAIT_MS = 30_000;

/** `?count=N&wait_ms=M`: waits (at most 30 s) until N attempts are recorded, instead of a test sleeping. */
async function listDeliveries(url: URL, ctx: ControlContext): Promise<object> {
  const count = Number(url.searchParams.get("count") ?? 0) || 0;
  const waitMs = Math.min(Number(url.searchParams.get("wait_ms") ?? 0) || 0, MAX_WAIT_MS);
  await ctx.webhooks.waitForAttempts(count, waitMs);
  return { deliveries: ctx.webhooks.attempts };
}

async function route(method: string, url: URL, text: string, ctx: ControlContext): Promise<object> {
  const path = url.pathname;
  if (method === "GET" && path === "/_sim/events") {
    // `?about=id,id`: only events whose object names one of these ids (a session, a PaymentIntent, a dispute).
    const about = url.searchParams
      .get("about")
      ?.split(",")
      .filter((id) => id !== "");
    const events = ctx.webhooks.outbox;
    return { events: about ? events.filter((e) => about.some((id) => e.payload.includes(`"${id}"`))) : events };
  }
  if (method === "GET" && path === "/_sim/deliveries") return listDeliveries(url, ctx);
  if (method === "GET" && path === "/_sim/requests") {
    const contains = url.searchParams.get("contains");
    return { requests: contains === null ? ctx.store.apiCalls : ctx.store.apiCalls.filter((c) => c.path.includes(contains)) };
  }
  if (method !== "POST") throw new ControlError(404, `no control route for ${method} ${path}`);
  if (path === "/_sim/webhooks") return setWebhooks(body(text), ctx);
  if (path === "/_sim/webhooks/release") return release(body(text), ctx);
  if (path === "/_sim/disputes") return dispute(body(text), ctx);
  if (path === "/_sim/reset") {
    ctx.webhooks.reset();
    ctx.store.reset();
    ctx.keys.clear();
    return { reset: true };
  }
  const pays = /^\/_sim\/sessions\/([^/]+)\/pay$/.exec(path);
  if (pays) return pay(decodeURIComponent(pays[1]!), body(text), ctx);
  const closes = /^\/_sim\/disputes\/([^/]+)\/close$/.exec(path);
  if (closes) {
    const b = body(text);
    if (typeof b.status !== "string" || !CLOSE_STATUSES.includes(b.status)) throw new ControlError(400, `status must be one of ${CLOSE_STATUSES.join(", ")}`);
    return closeDispute(ctx.store, decodeURIComponent(closes[1]!), b.status);
  }
  const reviews = /^\/_sim\/disputes\/([^/]+)\/review$/.exec(path);
  if (reviews) return reviewDispute(ctx.store, decodeURIComponent(reviews[1]!));
  const fails = /^\/_sim\/refunds\/([^/]+)\/fail$/.exec(path);
  if (fails) return failRefund(ctx.store, decodeURIComponent(fails[1]!));
  throw new ControlError(404, `no control route for ${method} ${path}`);
}

/** Answers a `/_sim/…` request; Stripe-shaped errors (a decline, a missing object) keep Stripe's shape. */
export async function serveControl(method: string, url: URL, text: string, res: ServerResponse, ctx: ControlContext): Promise<void> {
  try {
    const answer = await route(method, url, text, ctx);
    if (!res.destroyed) sendJson(res, 200, JSON.stringify(answer));
  } catch (err) {
    if (err instanceof ControlError) return sendJson(res, err.status, errorJson(err.status, err.message, "sim_error"));
    if (err instanceof ApiError) return sendJson(res, err.status, JSON.stringify(errorPayload(err.body)));
    throw err;
  }
}
