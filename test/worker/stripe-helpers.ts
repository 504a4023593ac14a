import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { csrfOf, type ConsoleClient } from "./console-helpers";
import { admin, ORIGIN } from "./helpers";
import { STRIPE_EVENT_TYPES } from "../../src/payments/stripe-events";
import { paymentTerms, quote } from "../../src/payments/payment-terms";
import { settings } from "../../src/settings";

/**
 * The Stripe side of payment tests: the Stripe simulator (test/global-simulator.ts starts it, without a
 * webhook URL, so tests deliver its signed events themselves: late, twice, out of order or forged).
 */
export const STRIPE = env.STRIPE_API_URL!;
export const STRIPE_KEY = env.STRIPE_SECRET_KEY!;
export const WEBHOOK_SECRET = env.STRIPE_WEBHOOK_SECRET!;
export const USD = 1_000_000_000;

export type SimEvent = { id: string; type: string; created: number; payload: string; signature: string };
export type Audit = { credits_nano: number; grants: number; grants_nano: number; reversals: number; reversed_nano: number };
export type PaymentRow = {
  id: string;
  status: string;
  provider: string;
  reference: string | null;
  amount_nano: number;
  fee_nano: number;
  checkout_session: string | null;
  refunded_nano: number;
  disputed_nano: number;
};

export const audit = (accountId: string) => admin<Audit>(`/accounts/${accountId}/audit`);
export const paymentRows = async (accountId: string) =>
  (await env.DB.prepare("SELECT * FROM payments WHERE account_id = ? ORDER BY created_at").bind(accountId).all<PaymentRow>()).results;

/** A Stripe API call as any client makes it (form-encoded, the secret key). */
export async function stripeApi<T>(method: "GET" | "POST", path: string, form: Record<string, string> = {}): Promise<T> {
  const res = await fetch(`${STRIPE}${path}`, {
    method,
    headers: { authorization: `Bearer ${STRIPE_KEY}`, "content-type": "application/x-www-form-urlencoded" },
    body: method === "POST" ? new URLSearchParams(form) : undefined,
  });
  if (!res.ok) throw new Error(`stripe ${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function control<T>(path: string, body: unknown = {}): Promise<T> {
  const res = await fetch(`${STRIPE}/_sim${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`stripe simulator ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export type Session = {
  id: string;
  url: string;
  status: string;
  payment_status: string;
  payment_intent: string | null;
  amount_total: number;
  metadata: Record<string, string>;
};

/** Pays a session as the hosted page would, with the approved test card. */
export const paySession = (sessionId: string) => control<Session>(`/sessions/${sessionId}/pay`, { card: "4242424242424242" });
export const openDispute = (paymentIntent: string, amount?: number, kind: "chargeback" | "inquiry" = "chargeback") =>
  control<{ id: string }>("/disputes", { payment_intent: paymentIntent, amount, kind });
export const openInquiry = (paymentIntent: string, amount?: number) => openDispute(paymentIntent, amount, "inquiry");
export const reviewDispute = (id: string) => control<unknown>(`/disputes/${id}/review`);
export const closeDispute = (id: string, status: "won" | "lost" | "warning_closed" | "charge_refunded") =>
  control<unknown>(`/disputes/${id}/close`, { status });
export const failRefund = (id: string) => control<unknown>(`/refunds/${id}/fail`);
/** The Stripe API requests the simulator received whose path contains `part` (a session id, say). */
export const stripeCalls = async (part: string) =>
  (await (await fetch(`${STRIPE}/_sim/requests?contains=${encodeURIComponent(part)}`)).json()) as { requests: { method: string; path: string }[] };
export const refund = (paymentIntent: string, amount?: number) =>
  stripeApi<{ id: string }>("POST", "/v1/refunds", { payment_intent: paymentIntent, ...(amount ? { amount: String(amount) } : {}) });

/** The events Stripe sends this deployment's endpoint (the types it subscribes to) about these objects, oldest first. */
export const sentEvents = async (...ids: string[]) => (await eventsAbout(...ids)).filter((e) => (STRIPE_EVENT_TYPES as string[]).includes(e.type));

/** The simulator's events about one object (a session, a PaymentIntent), oldest first, each as Stripe signed it. */
export async function eventsAbout(...ids: string[]): Promise<SimEvent[]> {
  const { events } = (await (await fetch(`${STRIPE}/_sim/events?about=${ids.map(encodeURIComponent).join(",")}`)).json()) as { events: SimEvent[] };
  return events;
}

/** Delivers a payload to the Worker's webhook as Stripe does; `signature` null = no header. */
export async function deliver(payload: string, signature: string | null): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (signature !== null) headers["stripe-signature"] = signature;
  return exports.default.fetch(new Request(`${ORIGIN}/webhooks/stripe`, { method: "POST", headers, body: payload }));
}
export const deliverEvent = (e: SimEvent) => deliver(e.payload, e.signature);
/** Delivers an event and reads the whole answer (an unread body would hold one of the test's few connections): its status. */
export async function delivered(e: SimEvent): Promise<number> {
  const res = await deliverEvent(e);
  await res.arrayBuffer();
  return res.status;
}

/** Stripe's signature scheme: `t=<s>,v1=<hex HMAC-SHA256("<t>.<payload>")>`, here with any secret (a forger's). */
export async function sign(payload: string, secret: string, t = Math.floor(Date.now() / 1000)): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${t}.${payload}`)));
  return `t=${t},v1=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The add-credits review form for `amount` as the page renders it: its one-time payment id and CSRF token. */
export async function reviewForm(client: ConsoleClient, amount: string): Promise<{ paymentId: string; csrf: string; html: string }> {
  const html = (await client.page(`/settings/credits?amount=${encodeURIComponent(amount)}`)).html;
  return { paymentId: /name="payment_id" value="([^"]+)"/.exec(html)![1]!, csrf: csrfOf(html), html };
}

/** Sends the reviewed form as the browser does (a resubmit too: no page load in between, which would reconcile). */
export const submit = (client: ConsoleClient, form: { paymentId: string; csrf: string }, amount: string) =>
  client.post("/settings/credits", { payment_id: form.paymentId, amount }, { csrf: form.csrf });

/** Starts a checkout for `amount` and returns its session id (from the redirect to Stripe's page). */
export async function checkout(client: ConsoleClient, amount: string): Promise<{ paymentId: string; sessionId: string; location: string }> {
  const form = await reviewForm(client, amount);
  const res = await submit(client, form, amount);
  if (res.status !== 303) throw new Error(`checkout: ${res.status} ${await res.text()}`);
  const location = res.headers.get("location")!;
  return { paymentId: form.paymentId, sessionId: /\/c\/pay\/(cs_[A-Za-z0-9_]+)/.exec(location)![1]!, location };
}

let accounts = 0;
/** A fresh account (made by the admin API: cheaper than a console sign-up). */
export async function payerAccount(): Promise<string> {
  const email = `payer${Date.now()}-${accounts++}-${Math.random().toString(36).slice(2)}@example.test`;
  return (await admin<{ id: string }>("/accounts", { email })).id;
}

/**
 * An open checkout of `creditsCents` for the account: the payment row and its Checkout Session as the
 * Worker's checkout makes them (same metadata, same two lines), written here so a table of cases can pay
 * many times on one account, and an account can have more checkouts than the console lets it start.
 */
export async function openCheckout(creditsCents: number, accountId: string, createdAt = Date.now()): Promise<{ paymentId: string; sessionId: string }> {
  const q = quote(paymentTerms(settings(env)), creditsCents);
  const paymentId = `pay_${"x".repeat(11)}${crypto.randomUUID().replace(/-/g, "")}`;
  await env.DB.prepare("INSERT INTO payments (id, account_id, provider, amount_nano, fee_nano, status, created_at) VALUES (?, ?, 'stripe', ?, ?, 'pending', ?)")
    .bind(paymentId, accountId, q.creditsNano, q.feeNano, createdAt)
    .run();
  const line = (i: number, name: string, cents: number) => ({
    [`line_items[${i}][quantity]`]: "1",
    [`line_items[${i}][price_data][currency]`]: "usd",
    [`line_items[${i}][price_data][unit_amount]`]: String(cents),
    [`line_items[${i}][price_data][product_data][name]`]: name,
  });
  const session = await stripeApi<Session>("POST", "/v1/checkout/sessions", {
    mode: "payment",
    ...line(0, "Switchyard credits", q.creditsCents),
    ...line(1, "Platform fee", q.feeCents),
    client_reference_id: accountId,
    "metadata[payment_id]": paymentId,
    "metadata[account_id]": accountId,
    "payment_intent_data[metadata][payment_id]": paymentId,
    "payment_intent_data[metadata][account_id]": accountId,
    success_url: `${ORIGIN}/settings/credits?checkout=${paymentId}`,
    cancel_url: `${ORIGIN}/settings/credits?cancelled=${paymentId}`,
  });
  await env.DB.prepare("UPDATE payments SET checkout_session = ? WHERE id = ?").bind(session.id, paymentId).run();
  return { paymentId, sessionId: session.id };
}

/** A paid checkout of `creditsCents` for the account (a fresh one by default), its webhook not delivered. */
export async function paidPayment(
  creditsCents: number,
  accountId?: string,
): Promise<{ accountId: string; paymentId: string; sessionId: string; paymentIntent: string }> {
  const account = accountId ?? (await payerAccount());
  const { paymentId, sessionId } = await openCheckout(creditsCents, account);
  const paid = await paySession(sessionId);
  return { accountId: account, paymentId, sessionId, paymentIntent: paid.payment_intent! };
}
