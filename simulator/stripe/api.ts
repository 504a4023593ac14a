// Stripe's REST API as the SDKs call it: `/v1/…`, form-encoded bodies, bearer secret keys, JSON
// answers with `Request-Id`, Stripe's error objects, and idempotency keys on POST.
import type { IncomingMessage, ServerResponse } from "node:http";
import type Stripe from "stripe";
import { createSession, expireSession, sessionRecord } from "./checkout";
import { ApiError, errorPayload, invalid, noSuch, unrecognizedUrl, type StripeErrorBody } from "./errors";
import { expand } from "./expand";
import { canonical, FormError, parseForm, type Form } from "./form";
import type { IdempotencyKeys } from "./idempotency";
import { newId } from "./ids";
import { Params } from "./params";
import { listDisputes } from "./disputes";
import { createRefund } from "./refunds";
import { listObject } from "./session-object";
import { API_VERSION, type RequestRef, type Store } from "./store";

export type ApiContext = { store: Store; keys: IdempotencyKeys; apiKeyPrefix: string };

type Call = { p: Params; id: string; request: RequestRef; store: Store };
type Route = { method: "GET" | "POST"; path: RegExp; run: (c: Call) => object };

const NO_KEY =
  "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.";
const NOT_FORM =
  "Invalid request (check that your POST content type is application/x-www-form-urlencoded). If you have any questions, we can help at https://support.stripe.com/.";

function found<T>(value: T | undefined, kind: string, id: string): T {
  if (value === undefined) throw noSuch(kind, id);
  return value;
}

/** Stripe's cursor pagination over items listed newest first: `limit`, `starting_after`, `ending_before`. */
function page<T extends { id: string }>(c: Call, items: T[], url: string, kind: string): Stripe.ApiList<T> {
  const limit = c.p.int("limit", { min: 1, max: 100 }) ?? 10;
  const after = c.p.str("starting_after");
  const before = c.p.str("ending_before");
  let from = 0;
  let to = items.length;
  if (after !== undefined) {
    const i = items.findIndex((x) => x.id === after);
    if (i === -1) throw noSuch(kind, after, "starting_after");
    from = i + 1;
  } else if (before !== undefined) {
    const i = items.findIndex((x) => x.id === before);
    if (i === -1) throw noSuch(kind, before, "ending_before");
    to = i;
    from = Math.max(0, to - limit);
  }
  const data = items.slice(from, Math.min(to, from + limit));
  const hasMore = before !== undefined ? from > 0 : from + limit < to;
  return listObject(data, hasMore, url);
}

function listSessions(c: Call): object {
  const intent = c.p.str("payment_intent");
  const status = c.p.oneOf("status", ["open", "complete", "expired"] as const);
  const email = c.p.hash("customer_details")?.str("email", { required: true });
  const sessions = [...c.store.sessions.values()]
    .map((r) => r.session)
    .filter((s) => (intent === undefined || s.payment_intent === intent) && (status === undefined || s.status === status))
    .filter((s) => email === undefined || s.customer_details?.email === email)
    .reverse();
  return page(c, sessions, "/v1/checkout/sessions", "checkout.session");
}

function listEvents(c: Call): object {
  const type = c.p.str("type");
  // `charge.*` matches every type under `charge.`, as Stripe's filter does.
  const matches = (t: string) => type === undefined || (type.endsWith("*") ? t.startsWith(type.slice(0, -1)) : t === type);
  const events = [...c.store.events.values()].filter((e) => matches(e.type)).reverse();
  return page(c, events, "/v1/events", "event");
}

function disputes(c: Call): object {
  const filter = { charge: c.p.str("charge"), paymentIntent: c.p.str("payment_intent") };
  return page(c, listDisputes(c.store, filter), "/v1/disputes", "dispute");
}

const ID = "([^/]+)";
const ROUTES: Route[] = [
  { method: "POST", path: /^\/v1\/checkout\/sessions$/, run: (c) => createSession(c.store, c.p) },
  { method: "GET", path: /^\/v1\/checkout\/sessions$/, run: listSessions },
  { method: "GET", path: new RegExp(`^/v1/checkout/sessions/${ID}$`), run: (c) => sessionRecord(c.store, c.id).session },
  {
    method: "GET",
    path: new RegExp(`^/v1/checkout/sessions/${ID}/line_items$`),
    run: (c) => page(c, sessionRecord(c.store, c.id).items, `/v1/checkout/sessions/${c.id}/line_items`, "line_item"),
  },
  { method: "POST", path: new RegExp(`^/v1/checkout/sessions/${ID}/expire$`), run: (c) => (c.p.done(), expireSession(c.store, c.id, c.request)) },
  { method: "GET", path: new RegExp(`^/v1/payment_intents/${ID}$`), run: (c) => found(c.store.paymentIntents.get(c.id), "payment_intent", c.id) },
  { method: "GET", path: new RegExp(`^/v1/charges/${ID}$`), run: (c) => found(c.store.charges.get(c.id), "charge", c.id) },
  { method: "POST", path: /^\/v1\/refunds$/, run: (c) => createRefund(c.store, c.p, c.request) },
  { method: "GET", path: new RegExp(`^/v1/refunds/${ID}$`), run: (c) => found(c.store.refunds.get(c.id), "refund", c.id) },
  { method: "GET", path: /^\/v1\/disputes$/, run: disputes },
  { method: "GET", path: new RegExp(`^/v1/disputes/${ID}$`), run: (c) => found(c.store.disputes.get(c.id), "dispute", c.id) },
  { method: "GET", path: /^\/v1\/events$/, run: listEvents },
  { method: "GET", path: new RegExp(`^/v1/events/${ID}$`), run: (c) => found(c.store.events.get(c.id), "event", c.id) },
];

/** The secret key of a Bearer or Basic (`key:`) Authorization header. */
function apiKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value = ""] = header.trim().split(/\s+/, 2);
  if (scheme?.toLowerCase() === "bearer") return value || undefined;
  if (scheme?.toLowerCase() === "basic") return Buffer.from(value, "base64").toString("utf8").split(":")[0] || undefined;
  return undefined;
}

/** `sk_test_****…1234`: Stripe never echoes a whole key. */
function redact(key: string): string {
  return key.length <= 12 ? `${key.slice(0, 3)}****` : `${key.slice(0, 8)}${"*".repeat(key.length - 12)}${key.slice(-4)}`;
}

function authError(req: IncomingMessage, prefix: string): ApiError | null {
  const key = apiKey(req.headers.authorization);
  if (key === undefined) return new ApiError(401, { type: "invalid_request_error", message: NO_KEY });
  if (!key.startsWith(prefix) || key.length <= prefix.length)
    return new ApiError(401, { type: "invalid_request_error", message: `Invalid API Key provided: ${redact(key)}` });
  return null;
}

/** The request's parameters: the query for GET, the form body for POST. */
function readForm(req: IncomingMessage, url: URL, body: string): Form {
  if (req.method !== "POST") return parseForm(url.search.slice(1));
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (body.trim() !== "" && type !== "application/x-www-form-urlencoded") throw invalid(undefined, NOT_FORM);
  return parseForm(body);
}

type Answer = { status: number; body: string };

function answerOf(status: number, value: object): Answer {
  return { status, body: `${JSON.stringify(value, null, 2)}\n` };
}

function errorAnswer(err: unknown): Answer {
  if (err instanceof ApiError) return answerOf(err.status, errorPayload(err.body));
  if (err instanceof FormError) return answerOf(400, errorPayload({ type: "invalid_request_error", message: err.message }));
  const body: StripeErrorBody = { type: "api_error", message: `simulator error: ${String(err)}` };
  return answerOf(500, errorPayload(body));
}

function run(req: IncomingMessage, url: URL, body: string, ctx: ApiContext, request: RequestRef): { answer: Answer; params?: string } {
  const route = ROUTES.find((r) => r.method === req.method && r.path.test(url.pathname));
  if (!route) return { answer: errorAnswer(unrecognizedUrl(req.method ?? "GET", url.pathname)) };
  let form: Form;
  try {
    form = readForm(req, url, body);
  } catch (err) {
    return { answer: errorAnswer(err) };
  }
  const params = canonical(form);
  try {
    const p = new Params(form);
    const paths = p.strings("expand");
    const id = decodeURIComponent(route.path.exec(url.pathname)![1] ?? "");
    const result = route.run({ p, id, request, store: ctx.store });
    p.done();
    return { answer: answerOf(200, expand(ctx.store, result, paths)), params };
  } catch (err) {
    return { answer: errorAnswer(err), params };
  }
}

export function serveApi(req: IncomingMessage, res: ServerResponse, url: URL, body: string, ctx: ApiContext): void {
  const requestId = newId("req");
  const key = req.method === "POST" ? req.headers["idempotency-key"] : undefined;
  const idempotencyKey = typeof key === "string" && key !== "" ? key : undefined;
  const version = req.headers["stripe-version"];
  const headers: Record<string, string> = {
    "Request-Id": requestId,
    "Stripe-Version": typeof version === "string" && version !== "" ? version : API_VERSION,
    "Cache-Control": "no-cache, no-store",
    ...(idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {}),
  };
  const send = (a: Answer, extra: Record<string, string> = {}) => {
    res.writeHead(a.status, { ...headers, ...extra, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(a.body) });
    res.end(a.body);
  };
  const refused = authError(req, ctx.apiKeyPrefix);
  if (refused) return send(errorAnswer(refused), { "WWW-Authenticate": 'Basic realm="Stripe"' });

  const endpoint = `${req.method} ${url.pathname}`;
  if (idempotencyKey) {
    try {
      const form = readForm(req, url, body);
      const replay = ctx.keys.check(idempotencyKey, endpoint, canonical(form));
      if (replay) return send(replay, { "Idempotent-Replayed": "true", "Original-Request": replay.originalRequest });
    } catch (err) {
      return send(errorAnswer(err));
    }
  }
  const { answer, params } = run(req, url, body, ctx, { id: requestId, idempotency_key: idempotencyKey ?? null });
  if (idempotencyKey && params !== undefined) ctx.keys.save(idempotencyKey, endpoint, params, { ...answer, requestId });
  send(answer);
}
