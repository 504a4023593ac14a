// The Stripe simulator driven the way an integration drives Stripe: the official SDK pointed at it by
// host/port/protocol, its hosted page posted like a browser, its webhooks received by a local server.
import { spawn } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Stripe from "stripe";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { canonical, parseForm } from "../../simulator/stripe/form";
import { startStripeSimulator, stripeSignature, type StripeSimulator } from "../../simulator/stripe/server";

const SECRET = "whsec_simulator_tests";
const KEY = "sk_test_simulator_tests";
const WAIT_MS = 3000;

type SimEvent = { id: string; type: string; created: number; payload: string; signature: string };
type Delivery = { event: string; type: string; attempt: number; status: number };
type Received = { headers: IncomingHttpHeaders; body: string; event: Stripe.Event };

let sim: StripeSimulator;
let stripe: Stripe;

/** A webhook endpoint: answers each POST with the next queued status (200 when none), and records it. */
class Receiver {
  readonly received: Received[] = [];
  readonly statuses: number[] = [];
  private server!: Server;
  private waiters: (() => void)[] = [];
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const status = this.statuses.shift() ?? 200;
        // Only accepted deliveries count as received: a 500 asks Stripe to try again.
        if (status < 300) this.received.push({ headers: req.headers, body, event: JSON.parse(body) as Stripe.Event });
        res.writeHead(status).end();
        for (const w of this.waiters) w();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks/stripe`;
  }

  /** Resolves once `n` deliveries were accepted; fails after WAIT_MS. */
  waitFor(n: number): Promise<Received[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.received.length < n) return false;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== onChange);
        resolve(this.received.slice(0, n));
        return true;
      };
      const onChange = () => void check();
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== onChange);
        reject(new Error(`expected ${n} deliveries, got ${this.received.length}`));
      }, WAIT_MS);
      if (!check()) this.waiters.push(onChange);
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function control<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${sim.url}/_sim${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const events = async () => (await control<{ events: SimEvent[] }>("/events")).events;
/** The delivery attempts, once at least `count` are recorded (the simulator waits, up to WAIT_MS). */
const deliveries = async (count = 0) => (await control<{ deliveries: Delivery[] }>(`/deliveries?count=${count}&wait_ms=${WAIT_MS}`)).deliveries;

function sessionParams(overrides: Partial<Stripe.Checkout.SessionCreateParams> = {}): Stripe.Checkout.SessionCreateParams {
  return {
    mode: "payment",
    line_items: [
      { quantity: 2, price_data: { currency: "usd", unit_amount: 500, product_data: { name: "Credits", description: "Prepaid credits" } } },
      { quantity: 1, price_data: { currency: "usd", unit_amount: 255, product_data: { name: "Platform fee" } } },
    ],
    client_reference_id: "acct_1",
    metadata: { payment_id: "pay_1", account_id: "acct_1" },
    payment_intent_data: { metadata: { payment_id: "pay_1" } },
    customer_email: "buyer@example.com",
    success_url: "http://shop.test/done?session={CHECKOUT_SESSION_ID}",
    cancel_url: "http://shop.test/cancelled",
    ...overrides,
  };
}

/** A paid session (through the control API, as the hosted page would pay it) and its PaymentIntent id. */
async function paidSession(): Promise<{ session: Stripe.Checkout.Session; intent: string }> {
  const created = await stripe.checkout.sessions.create(sessionParams());
  const session = await control<Stripe.Checkout.Session>(`/sessions/${created.id}/pay`, { card: "4242424242424242" });
  return { session, intent: session.payment_intent as string };
}

function postPage(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, { method: "POST", redirect: "manual", body: new URLSearchParams(fields) });
}

const CARD_FORM = { email: "buyer@example.com", cardExpiry: "12 / 40", cardCvc: "123", billingName: "Ada Buyer" };

beforeAll(async () => {
  sim = await startStripeSimulator({ webhookSecret: SECRET, webhookBackoffMs: 10, webhookAttempts: 3 });
  stripe = new Stripe(KEY, { host: "127.0.0.1", port: sim.port, protocol: "http" });
});

afterAll(async () => {
  await sim?.close();
});

beforeEach(async () => {
  sim.setWebhookUrl(undefined);
  await control("/reset", {});
});

describe("API through the official SDK", () => {
  it("creates a Checkout Session with Stripe's fields, line items and its hosted URL", async () => {
    const s = await stripe.checkout.sessions.create(sessionParams());
    expect(s.id).toMatch(/^cs_test_[A-Za-z0-9]{58}$/);
    expect(s).toMatchObject({
      object: "checkout.session",
      mode: "payment",
      status: "open",
      payment_status: "unpaid",
      amount_subtotal: 1255,
      amount_total: 1255,
      currency: "usd",
      metadata: { payment_id: "pay_1", account_id: "acct_1" },
      client_reference_id: "acct_1",
      customer_email: "buyer@example.com",
      payment_intent: null,
      livemode: false,
      success_url: "http://shop.test/done?session={CHECKOUT_SESSION_ID}",
      url: `${sim.url}/c/pay/${s.id}`,
    });
    expect(s.expires_at - s.created).toBe(24 * 3600);
    expect(s.lastResponse.requestId).toMatch(/^req_/);
    const items = await stripe.checkout.sessions.listLineItems(s.id);
    expect(items.data.map((i) => [i.description, i.quantity, i.amount_total, i.price?.unit_amount])).toEqual([
      ["Credits", 2, 1000, 500],
      ["Platform fee", 1, 255, 255],
    ]);
  });

  it("replays an idempotent create and refuses the key with other parameters", async () => {
    const first = await stripe.checkout.sessions.create(sessionParams(), { idempotencyKey: "order-1" });
    const again = await stripe.checkout.sessions.create(sessionParams(), { idempotencyKey: "order-1" });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    const changed = stripe.checkout.sessions.create(sessionParams({ client_reference_id: "acct_2" }), { idempotencyKey: "order-1" });
    await expect(changed).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    await expect(changed).rejects.toThrow(/^Keys for idempotent requests can only be used with the same parameters they were first used with\./);
    expect((await stripe.checkout.sessions.list()).data).toHaveLength(1);
  });

  it("retrieves, and lists by PaymentIntent once paid", async () => {
    const { session, intent } = await paidSession();
    const got = await stripe.checkout.sessions.retrieve(session.id, { expand: ["payment_intent"] });
    expect(got).toMatchObject({ status: "complete", payment_status: "paid", url: null });
    expect(got.payment_intent).toMatchObject({ id: intent, object: "payment_intent", status: "succeeded", amount: 1255, metadata: { payment_id: "pay_1" } });
    await stripe.checkout.sessions.create(sessionParams()); // another, unpaid
    const listed = await stripe.checkout.sessions.list({ payment_intent: intent, limit: 5 });
    expect(listed).toMatchObject({ object: "list", has_more: false, url: "/v1/checkout/sessions" });
    expect(listed.data.map((s) => s.id)).toEqual([session.id]);
    const pi = await stripe.paymentIntents.retrieve(intent);
    const charge = await stripe.charges.retrieve(pi.latest_charge as string);
    expect(charge).toMatchObject({
      paid: true,
      status: "succeeded",
      amount: 1255,
      amount_refunded: 0,
      payment_intent: intent,
      metadata: { payment_id: "pay_1" },
    });
  });

  it("answers 401 without a valid secret key, in Stripe's error shape", async () => {
    const bare = await fetch(`${sim.url}/v1/checkout/sessions`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get("request-id")).toMatch(/^req_/);
    const { error } = (await bare.json()) as { error: { type: string; message: string } };
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toMatch(/^You did not provide an API key\./);
    const wrong = new Stripe("sk_live_nope_nope_nope", { host: "127.0.0.1", port: sim.port, protocol: "http" });
    await expect(wrong.checkout.sessions.list()).rejects.toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
  });

  it("answers 404 resource_missing for a missing object, 404 for an unknown route, 400 for an unknown parameter", async () => {
    const missing = await stripe.checkout.sessions.retrieve("cs_test_missing").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: "resource_missing", param: "id", message: "No such checkout.session: 'cs_test_missing'" });
    const route = await fetch(`${sim.url}/v1/nothing`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(route.status).toBe(404);
    expect(((await route.json()) as { error: { message: string } }).error.message).toMatch(/^Unrecognized request URL \(GET: \/v1\/nothing\)/);
    const unknown = await stripe.checkout.sessions
      .create({ ...sessionParams(), sucess_url: "x" } as Stripe.Checkout.SessionCreateParams)
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({ statusCode: 400, code: "parameter_unknown", param: "sucess_url" });
    const bad = await stripe.checkout.sessions
      .create(sessionParams({ line_items: [{ quantity: 0, price_data: { currency: "usd", unit_amount: 500, product_data: { name: "x" } } }] }))
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ statusCode: 400, type: "StripeInvalidRequestError", param: "line_items[0][quantity]" });
  });

  it("works with the SDK's fetch HTTP client (the one Workers use)", async () => {
    const viaFetch = new Stripe(KEY, { host: "127.0.0.1", port: sim.port, protocol: "http", httpClient: Stripe.createFetchHttpClient() });
    const s = await viaFetch.checkout.sessions.create(sessionParams());
    expect((await viaFetch.checkout.sessions.retrieve(s.id)).amount_total).toBe(1255);
  });

  it("expires an open session once, with its event", async () => {
    const s = await stripe.checkout.sessions.create(sessionParams());
    const expired = await stripe.checkout.sessions.expire(s.id);
    expect(expired).toMatchObject({ status: "expired", payment_status: "unpaid", url: null });
    const again = await stripe.checkout.sessions.expire(s.id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((again as Error).message).toBe('Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of `expired`.');
    const [event] = await events();
    expect(event!.type).toBe("checkout.session.expired");
    expect(await (await fetch(s.url!)).text()).toContain("expired");
  });
});

describe("hosted checkout page", () => {
  it("shows the items, the total and labelled card fields", async () => {
    const s = await stripe.checkout.sessions.create(sessionParams());
    const res = await fetch(s.url!);
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const text of ["Credits", "$10.00", "Platform fee", "$2.55", "$12.55", 'value="buyer@example.com"', 'href="http://shop.test/cancelled"', "← Back"]) {
      expect(html).toContain(text);
    }
    for (const id of ["email", "cardNumber", "cardExpiry", "cardCvc", "billingName"]) {
      expect(html).toContain(`<label for="${id}">`);
      expect(html).toContain(`id="${id}"`);
    }
    expect(html).toMatch(/<button type="submit" id="submit">Pay \$12\.55<\/button>/);
  });

  it("pays with 4242 4242 4242 4242 and redirects to success_url with the session id", async () => {
    const s = await stripe.checkout.sessions.create(sessionParams());
    const res = await postPage(s.url!, { ...CARD_FORM, cardNumber: "4242 4242 4242 4242" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`http://shop.test/done?session=${s.id}`);
    const paid = await stripe.checkout.sessions.retrieve(s.id);
    expect(paid).toMatchObject({ status: "complete", payment_status: "paid", customer_details: { email: "buyer@example.com", name: "Ada Buyer" } });
    expect(paid.payment_intent).toMatch(/^pi_/);
    const completed = await fetch(s.url!);
    expect(await completed.text()).toContain(`http://shop.test/done?session=${s.id}`);
  });

  it("declines 4000 0000 0000 0002 and 9995 with Stripe's messages; the session stays open", async () => {
    const s = await stripe.checkout.sessions.create(sessionParams());
    const declined = await postPage(s.url!, { ...CARD_FORM, cardNumber: "4000 0000 0000 0002" });
    expect(declined.status).toBe(402);
    expect(await declined.text()).toContain("Your card was declined.");
    const broke = await postPage(s.url!, { ...CARD_FORM, cardNumber: "4000000000009995" });
    expect(await broke.text()).toContain("Your card has insufficient funds.");
    const invalid = await postPage(s.url!, { ...CARD_FORM, cardNumber: "1234 5678 9012 3456" });
    expect(invalid.status).toBe(400);
    expect(await invalid.text()).toContain("Your card number is invalid.");
    const past = await postPage(s.url!, { ...CARD_FORM, cardNumber: "4242424242424242", cardExpiry: "01 / 20" });
    expect(await past.text()).toContain("Your card's expiration year is in the past.");
    const viaControl = await fetch(`${sim.url}/_sim/sessions/${s.id}/pay`, { method: "POST", body: JSON.stringify({ card: "4000000000000002" }) });
    expect(viaControl.status).toBe(402);
    expect(await viaControl.json()).toMatchObject({ error: { type: "card_error", code: "card_declined", decline_code: "generic_decline" } });
    expect((await stripe.checkout.sessions.retrieve(s.id)).status).toBe("open");
    expect(await events()).toEqual([]);
  });
});

describe("webhooks", () => {
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = new Receiver();
    await receiver.start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  it("signs checkout.session.completed so constructEvent accepts it, and only with the right secret", async () => {
    const { session } = await paidSession();
    const [event] = await events();
    const verified = stripe.webhooks.constructEvent(event!.payload, event!.signature, SECRET);
    expect(verified).toMatchObject({
      object: "event",
      type: "checkout.session.completed",
      api_version: Stripe.API_VERSION,
      livemode: false,
      pending_webhooks: 1,
    });
    expect(verified.id).toMatch(/^evt_/);
    expect(verified.data.object).toMatchObject({ id: session.id, status: "complete", payment_status: "paid", metadata: { payment_id: "pay_1" } });
    expect(() => stripe.webhooks.constructEvent(event!.payload, event!.signature, "whsec_someone_else")).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const t = Number(/^t=(\d+),/.exec(event!.signature)![1]);
    expect(event!.signature).toBe(stripeSignature(event!.payload, SECRET, t));
  });

  it("POSTs each event to the webhook URL, retrying after a 500", async () => {
    sim.setWebhookUrl(receiver.url);
    receiver.statuses.push(500);
    const { session } = await paidSession();
    const [got] = await receiver.waitFor(1);
    expect(got!.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(got!.headers["user-agent"]).toBe("Stripe/1.0 (+https://stripe.com/docs/webhooks)");
    const event = stripe.webhooks.constructEvent(got!.body, got!.headers["stripe-signature"] as string, SECRET);
    expect(event.type).toBe("checkout.session.completed");
    expect((event.data.object as Stripe.Checkout.Session).id).toBe(session.id);
    expect((await deliveries(2)).map((d) => [d.type, d.attempt, d.status])).toEqual([
      ["checkout.session.completed", 1, 500],
      ["checkout.session.completed", 2, 200],
    ]);
  });

  it("delivers every event twice in duplicate mode", async () => {
    sim.setWebhookUrl(receiver.url);
    await control("/webhooks", { mode: "deliver", duplicate: true });
    await paidSession();
    const got = await receiver.waitFor(2);
    expect(got[0]!.event.id).toBe(got[1]!.event.id);
    expect(got[0]!.body).toBe(got[1]!.body);
  });

  it("holds events and releases them out of order", async () => {
    sim.setWebhookUrl(receiver.url);
    await control("/webhooks", { mode: "hold" });
    const { intent } = await paidSession();
    await stripe.refunds.create({ payment_intent: intent, amount: 100 });
    expect(receiver.received).toHaveLength(0);
    const { released } = await control<{ released: { type: string; status: number }[] }>("/webhooks/release", { order: "reverse" });
    expect(released.map((r) => [r.type, r.status])).toEqual([
      ["charge.refunded", 200],
      ["refund.created", 200],
      ["checkout.session.completed", 200],
    ]);
    expect(receiver.received.map((r) => r.event.type)).toEqual(["charge.refunded", "refund.created", "checkout.session.completed"]);
  });
});

describe("refunds and disputes", () => {
  it("refunds part, then the rest; charge.refunded carries the cumulative amount; more is refused", async () => {
    const { intent } = await paidSession();
    const part = await stripe.refunds.create({ payment_intent: intent, amount: 255 });
    expect(part).toMatchObject({ object: "refund", amount: 255, status: "succeeded", payment_intent: intent });
    expect(part.id).toMatch(/^re_/);
    const rest = await stripe.refunds.create({ payment_intent: intent });
    expect(rest.amount).toBe(1000);
    const refunded = (await events()).filter((e) => e.type === "charge.refunded").map((e) => (JSON.parse(e.payload) as Stripe.ChargeRefundedEvent).data.object);
    expect(refunded.map((c) => [c.amount_refunded, c.refunded, c.payment_intent])).toEqual([
      [255, false, intent],
      [1255, true, intent],
    ]);
    const more = await stripe.refunds.create({ payment_intent: intent, amount: 1 }).catch((e: unknown) => e);
    expect(more).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(more).toMatchObject({ code: "charge_already_refunded" });
  });

  it("refuses a refund larger than what is left", async () => {
    const { intent } = await paidSession();
    const over = await stripe.refunds.create({ payment_intent: intent, amount: 2000 }).catch((e: unknown) => e);
    expect(over).toMatchObject({ statusCode: 400, param: "amount", message: "Refund amount ($20.00) is greater than unrefunded amount on charge ($12.55)" });
  });

  it("opens and closes disputes with their events", async () => {
    const { intent } = await paidSession();
    const dispute = await control<Stripe.Dispute>("/disputes", { payment_intent: intent });
    expect(dispute).toMatchObject({ object: "dispute", status: "needs_response", reason: "fraudulent", payment_intent: intent, amount: 1255, currency: "usd" });
    expect(dispute.id).toMatch(/^dp_/);
    await expect(stripe.refunds.create({ payment_intent: intent })).rejects.toMatchObject({ code: "charge_disputed" });
    const closed = await control<Stripe.Dispute>(`/disputes/${dispute.id}/close`, { status: "lost" });
    expect(closed.status).toBe("lost");
    const types = (await events()).map((e) => [e.type, (JSON.parse(e.payload) as Stripe.Event).data.object]);
    expect(types.slice(1)).toEqual([
      ["charge.dispute.created", expect.objectContaining({ id: dispute.id, status: "needs_response" })],
      ["charge.dispute.closed", expect.objectContaining({ id: dispute.id, status: "lost" })],
    ]);
  });
});

describe("inquiries, the disputes of a charge, failed refunds", () => {
  it("an inquiry leaves the charge refundable; refunding part keeps it open, refunding the rest closes it as warning_closed", async () => {
    const { intent } = await paidSession();
    const inquiry = await control<Stripe.Dispute>("/disputes", { payment_intent: intent, kind: "inquiry" });
    expect(inquiry).toMatchObject({ status: "warning_needs_response", is_charge_refundable: true, reason: "general", amount: 1255 });
    await stripe.refunds.create({ payment_intent: intent, amount: 255 });
    expect(await stripe.disputes.retrieve(inquiry.id)).toMatchObject({ status: "warning_needs_response" });
    await stripe.refunds.create({ payment_intent: intent });
    expect(await stripe.disputes.retrieve(inquiry.id)).toMatchObject({ status: "warning_closed", is_charge_refundable: false });
    const types = (await events()).map((e) => e.type);
    expect(types.slice(-3)).toEqual(["refund.created", "charge.refunded", "charge.dispute.closed"]);
    // Closed, it leaves room for a chargeback (one open dispute at a time).
    await expect(control("/disputes", { payment_intent: intent })).resolves.toMatchObject({ status: "needs_response" });
  });

  it("lists a charge's disputes through the SDK, newest first; evidence moves a dispute to review (charge.dispute.updated)", async () => {
    const { intent } = await paidSession();
    const charge = (await stripe.paymentIntents.retrieve(intent)).latest_charge as string;
    const inquiry = await control<Stripe.Dispute>("/disputes", { payment_intent: intent, kind: "inquiry", amount: 500 });
    await expect(control("/disputes", { payment_intent: intent })).rejects.toThrow(/already disputed/);
    expect(await control<Stripe.Dispute>(`/disputes/${inquiry.id}/review`, {})).toMatchObject({ status: "warning_under_review" });
    await expect(control(`/disputes/${inquiry.id}/close`, { status: "won" })).rejects.toThrow(/warning_closed or charge_refunded/);
    await control(`/disputes/${inquiry.id}/close`, { status: "charge_refunded" });
    const chargeback = await control<Stripe.Dispute>("/disputes", { payment_intent: intent, amount: 700 });
    const listed = await stripe.disputes.list({ charge });
    expect(listed.data.map((d) => [d.id, d.status, d.amount])).toEqual([
      [chargeback.id, "needs_response", 700],
      [inquiry.id, "charge_refunded", 500],
    ]);
    expect((await stripe.disputes.list({ payment_intent: intent, limit: 1 })).has_more).toBe(true);
    expect((await stripe.disputes.list({ charge: "ch_none" })).data).toEqual([]);
    expect(await stripe.charges.retrieve(charge)).toMatchObject({ disputed: true, amount_refunded: 0 });
    // A chargeback lost: the money is gone; Stripe refuses a refund.
    await control(`/disputes/${chargeback.id}/close`, { status: "lost" });
    await expect(stripe.refunds.create({ payment_intent: intent })).rejects.toMatchObject({ code: "charge_disputed" });
  });

  it("a refund the network sends back fails: its amount leaves amount_refunded (charge.refund.updated)", async () => {
    const { intent } = await paidSession();
    const refund = await stripe.refunds.create({ payment_intent: intent, amount: 300 });
    expect(await control<Stripe.Refund>(`/refunds/${refund.id}/fail`, {})).toMatchObject({ status: "failed", failure_reason: "expired_or_canceled_card" });
    expect(await stripe.charges.retrieve(refund.charge as string)).toMatchObject({ amount_refunded: 0, refunded: false });
    expect((await events()).map((e) => e.type).slice(-2)).toEqual(["charge.refund.updated", "refund.failed"]);
  });

  it("remembers the API requests it received, by path", async () => {
    const { session } = await paidSession();
    await stripe.checkout.sessions.retrieve(session.id);
    const { requests } = await control<{ requests: { method: string; path: string }[] }>(`/requests?contains=${session.id}`);
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/checkout/sessions/${session.id}`]);
  });
});

describe("form encoding and CLI", () => {
  it("parses Stripe's bracket notation", () => {
    const form = parseForm("line_items[0][price_data][unit_amount]=500&line_items[0][quantity]=2&metadata[payment_id]=p%201&expand[]=a&expand[]=b");
    expect(JSON.parse(JSON.stringify(form))).toEqual({
      line_items: { "0": { price_data: { unit_amount: "500" }, quantity: "2" } },
      metadata: { payment_id: "p 1" },
      expand: ["a", "b"],
    });
    expect(canonical(parseForm("b=2&a=1"))).toBe(canonical(parseForm("a=1&b=2")));
  });

  it("starts from the command line and stops on SIGTERM", async () => {
    const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
    const main = fileURLToPath(new URL("../../simulator/stripe/main.ts", import.meta.url));
    const child = spawn(tsx, [main, "--port", "0"], { env: { ...process.env, STRIPE_WEBHOOK_SECRET: SECRET }, stdio: ["ignore", "pipe", "inherit"] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no listening line")), 8000);
        createInterface({ input: child.stdout }).once("line", (l) => {
          clearTimeout(timer);
          resolve(l);
        });
      });
      const url = /^stripe simulator listening on (http:\/\/\S+)$/.exec(line)![1]!;
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
