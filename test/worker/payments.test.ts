import { describe, it, expect } from "vitest";
import { env, createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import type Stripe from "stripe";
import { applyStripeEvent, STRIPE_EVENT_TYPES } from "../../src/payments/stripe-events";
import { connectedPaymentDeps } from "../../src/payments/grant-payment";
import { ledgerFor } from "../../src/ledger/ledger";
import { settings } from "../../src/settings";
import paymentsDoc from "../../docs/payments.md?raw";
import { signUp, textOf } from "./console-helpers";
import {
  STRIPE,
  USD,
  WEBHOOK_SECRET,
  audit,
  checkout,
  closeDispute,
  deliver,
  deliverEvent,
  delivered,
  eventsAbout,
  failRefund,
  openDispute,
  openCheckout,
  openInquiry,
  paidPayment,
  payerAccount,
  paySession,
  paymentRows,
  refund,
  reviewDispute,
  reviewForm,
  sentEvents,
  sign,
  stripeApi,
  stripeCalls,
  submit,
  type Session,
  type SimEvent,
} from "./stripe-helpers";

// Buying credits through Stripe Checkout, against the Stripe simulator: credits come only from Stripe's
// signed word (webhook) or from Stripe's API (reconciliation), once per payment, whatever the order,
// the duplicates or the forgeries. The fee is charged beside the credits and never granted.

/** Runs the Worker's Cron Trigger handler (the default export's `scheduled`) as Cloudflare would. */
async function cron(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** A paid checkout of `amount` whose webhook has not been delivered: the session, its PaymentIntent, its events. */
async function paidCheckout(amount: string) {
  const person = await signUp();
  const started = await checkout(person.client, amount);
  const paid = await paySession(started.sessionId);
  return { ...person, ...started, paymentIntent: paid.payment_intent! };
}

const typesOf = (events: { type: string }[]) => events.map((e) => e.type);

describe("checkout: the session Stripe is asked for", () => {
  it("credits plus the platform fee as two lines, ids in the metadata, nothing granted before Stripe says it is paid", async () => {
    const { client, accountId } = await signUp();
    const { sessionId, location, paymentId } = await checkout(client, "25");
    expect(location).toBe(`${STRIPE}/c/pay/${sessionId}`);
    const session = await stripeApi<Session & { client_reference_id: string }>("GET", `/v1/checkout/sessions/${sessionId}`);
    // 5.5 % of $25.00 is 137.5 cents, rounded up: $1.38.
    expect(session).toMatchObject({
      status: "open",
      amount_total: 2638,
      client_reference_id: accountId,
      metadata: { payment_id: paymentId, account_id: accountId },
    });
    const lines = await stripeApi<{ data: { amount_total: number; description: string }[] }>("GET", `/v1/checkout/sessions/${sessionId}/line_items`);
    expect(lines.data.map((l) => [l.description, l.amount_total])).toEqual([
      ["Switchyard credits", 2500],
      ["Platform fee", 138],
    ]);
    expect(await paymentRows(accountId)).toMatchObject([
      { id: paymentId, status: "pending", provider: "stripe", amount_nano: 25 * USD, fee_nano: 138e7, checkout_session: sessionId },
    ]);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0, grants: 0 });
  });

  it("the same form sent again, or three times at once, goes to one session: one payment, one Stripe session", async () => {
    const { client, accountId } = await signUp();
    const form = await reviewForm(client, "7");
    const sent = await Promise.all([1, 2, 3].map(() => submit(client, form, "7")));
    const locations = new Set(sent.map((r) => r.headers.get("location")));
    expect(sent.map((r) => r.status)).toEqual([303, 303, 303]);
    expect(locations.size).toBe(1);
    expect((await submit(client, form, "7")).headers.get("location")).toBe([...locations][0]);
    expect(await paymentRows(accountId)).toHaveLength(1);
    const sessionId = /cs_[A-Za-z0-9_]+/.exec([...locations][0]!)![0];
    await paySession(sessionId);
    // Paid: the form is used up.
    expect((await submit(client, form, "7")).headers.get("location")).toBe("/settings/credits?done=duplicate");
  });
});

describe("webhooks: only signed events grant, once", () => {
  it("checkout.session.completed grants exactly the credits (not the fee), once, however often it is delivered", async () => {
    const { accountId, sessionId, paymentId, paymentIntent } = await paidCheckout("25");
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0 });
    const [completed] = await eventsAbout(sessionId);
    expect(completed!.type).toBe("checkout.session.completed");
    for (let i = 0; i < 3; i++) {
      const res = await deliverEvent(completed!);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true, outcome: i === 0 ? "granted" : "already granted" });
    }
    expect(await audit(accountId)).toMatchObject({ credits_nano: 25 * USD, grants: 1, grants_nano: 25 * USD, reversals: 0 });
    expect(await paymentRows(accountId)).toMatchObject([{ id: paymentId, status: "succeeded", reference: paymentIntent }]);
    const recorded = await env.DB.prepare("SELECT type, payment_id, outcome FROM stripe_events WHERE id = ?").bind(JSON.parse(completed!.payload).id).first();
    expect(recorded).toEqual({ type: "checkout.session.completed", payment_id: paymentId, outcome: "granted" });
  });

  it("forged, unsigned, stale or tampered events are refused (400) and grant nothing", async () => {
    const { accountId, sessionId } = await paidCheckout("30");
    const [completed] = await eventsAbout(sessionId);
    const payload = completed!.payload;
    expect((await deliver(payload, null)).status).toBe(400);
    expect((await deliver(payload, await sign(payload, "whsec_not_the_secret"))).status).toBe(400);
    expect((await deliver(payload, "t=1,v1=00")).status).toBe(400);
    // Signed with the right secret, but 10 minutes old: outside Stripe's 5-minute tolerance (a replay).
    expect((await deliver(payload, await sign(payload, WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 600))).status).toBe(400);
    // The real signature over a changed body (a bigger amount).
    const tampered = payload.replace(/"amount_total": ?3165/, '"amount_total": 99900');
    expect(tampered).not.toBe(payload);
    expect((await deliver(tampered, completed!.signature)).status).toBe(400);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0, grants: 0 });
    expect((await paymentRows(accountId))[0]!.status).toBe("pending");
    // The genuine event still works afterwards.
    expect((await deliverEvent(completed!)).status).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 30 * USD, grants: 1 });
  });

  it("a signed event whose session does not match its payment (another amount or account) is recorded and grants nothing", async () => {
    const { accountId, sessionId, paymentId } = await paidCheckout("12");
    const [completed] = await eventsAbout(sessionId);
    const event = JSON.parse(completed!.payload);
    event.id = `${event.id}x`;
    event.data.object.amount_total = 1;
    const payload = JSON.stringify(event);
    const res = await deliver(payload, await sign(payload, WEBHOOK_SECRET));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true, outcome: "refused: another amount" });
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0, grants: 0 });
    const other = await signUp();
    event.id = `${event.id}y`;
    event.data.object = {
      ...event.data.object,
      amount_total: 1266,
      client_reference_id: other.accountId,
      metadata: { ...event.data.object.metadata, account_id: other.accountId },
    };
    const stolen = JSON.stringify(event);
    expect(await (await deliver(stolen, await sign(stolen, WEBHOOK_SECRET))).json()).toEqual({ received: true, outcome: "refused: another account" });
    expect(await audit(other.accountId)).toMatchObject({ credits_nano: 0 });
    expect((await paymentRows(accountId))[0]).toMatchObject({ id: paymentId, status: "pending" });
  });

  it("an event type this deployment does not act on, or a session of no payment here, is acknowledged and changes nothing", async () => {
    const odd = JSON.stringify({
      id: "evt_odd_1",
      object: "event",
      type: "customer.created",
      data: { object: { id: "cus_1", object: "customer" } },
      created: 1,
      livemode: false,
    });
    expect(await (await deliver(odd, await sign(odd, WEBHOOK_SECRET))).json()).toEqual({
      received: true,
      outcome: "ignored: not an event type this deployment acts on",
    });
  });
});

describe("refunds and disputes: credits taken back, in any order", () => {
  it("a partial refund, then the rest: the refunded credits leave the balance; late and duplicate events change nothing more", async () => {
    const { accountId, sessionId, paymentIntent, paymentId } = await paidCheckout("20"); // $20 + $1.10 fee
    await refund(paymentIntent, 500);
    await refund(paymentIntent); // the rest: $16.10, the fee included
    const events = await eventsAbout(sessionId, paymentIntent);
    const refunds = events.filter((e) => e.type === "charge.refunded");
    expect(refunds).toHaveLength(2);
    // Delivered newest first, before the checkout's own event, each twice.
    for (const e of [...refunds].reverse()) {
      expect((await deliverEvent(e)).status).toBe(200);
      expect((await deliverEvent(e)).status).toBe(200);
    }
    const completed = events.find((e) => e.type === "checkout.session.completed")!;
    expect((await deliverEvent(completed)).status).toBe(200);
    // Granted once ($20), all of it taken back once (the refund of the fee takes no more).
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0, grants: 1, grants_nano: 20 * USD, reversals: 1, reversed_nano: 20 * USD });
    expect(await paymentRows(accountId)).toMatchObject([{ id: paymentId, status: "succeeded", refunded_nano: 20 * USD }]);
  });

  it("a partial refund takes back exactly that much", async () => {
    const { accountId, sessionId, paymentIntent } = await paidCheckout("40");
    await refund(paymentIntent, 1234);
    for (const e of await eventsAbout(sessionId, paymentIntent)) expect((await deliverEvent(e)).status).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 40 * USD - 1234e7, reversed_nano: 1234e7 });
  });

  it("a dispute withholds its amount while open; won, the credits come back, and a late 'created' does not take them again", async () => {
    const { accountId, sessionId, paymentIntent, paymentId } = await paidCheckout("15");
    for (const e of await eventsAbout(sessionId)) await deliverEvent(e);
    const dispute = await openDispute(paymentIntent, 1000);
    const [created] = (await eventsAbout(dispute.id)).filter((e) => e.type === "charge.dispute.created");
    expect((await deliverEvent(created!)).status).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 5 * USD, reversed_nano: 10 * USD });
    expect((await paymentRows(accountId))[0]).toMatchObject({ id: paymentId, disputed_nano: 10 * USD });
    await closeDispute(dispute.id, "won");
    const closed = (await eventsAbout(dispute.id)).find((e) => e.type === "charge.dispute.closed")!;
    expect((await deliverEvent(closed)).status).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 15 * USD, reversed_nano: 0 });
    expect((await deliverEvent(created!)).status).toBe(200); // late
    expect(await audit(accountId)).toMatchObject({ credits_nano: 15 * USD, grants: 1 });
  });

  it("a lost dispute keeps the credits taken; the balance may go below zero when they were spent", async () => {
    const { accountId, paymentIntent, sessionId } = await paidCheckout("10");
    const dispute = await openDispute(paymentIntent);
    await closeDispute(dispute.id, "lost");
    // Out of order: the dispute's events first (the payment is granted from Stripe's API before anything is taken).
    for (const e of (await eventsAbout(dispute.id)).reverse()) expect((await deliverEvent(e)).status).toBe(200);
    for (const e of await eventsAbout(sessionId)) expect((await deliverEvent(e)).status).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0, grants: 1, grants_nano: 10 * USD, reversed_nano: 10 * USD });
  });
});

/** Every order of `items` (n! of them). */
function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((first, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [first, ...rest]));
}

describe("refunds and disputes: the credits taken back are what Stripe's charge says now, in any delivery order", () => {
  it("an inquiry, a full refund, the inquiry closed (warning_closed or charge_refunded): the refund stays taken back", async () => {
    for (const closedAs of ["warning_closed", "charge_refunded"] as const) {
      // $10 of credits, $10.80 charged.
      const { accountId, sessionId, paymentIntent, paymentId } = await paidPayment(1000);
      for (const e of await sentEvents(sessionId)) await delivered(e);
      const inquiry = await openInquiry(paymentIntent);
      for (const e of await sentEvents(inquiry.id)) await delivered(e);
      expect(await audit(accountId), "withheld while the inquiry is open").toMatchObject({ credits_nano: 0 });
      // The whole charge refunded: the credits the refund covers; the inquiry closes (by itself on a full refund).
      if (closedAs === "warning_closed") await refund(paymentIntent);
      else {
        await refund(paymentIntent, 1000);
        await closeDispute(inquiry.id, "charge_refunded");
      }
      const later = (await sentEvents(paymentIntent, inquiry.id)).filter((e) => e.type === "charge.refunded" || e.type === "charge.dispute.closed");
      expect(typesOf(later)).toEqual(["charge.refunded", "charge.dispute.closed"]);
      for (const e of later) expect(await delivered(e)).toBe(200);
      expect(await audit(accountId), closedAs).toMatchObject({ credits_nano: 0, grants_nano: 10 * USD, reversed_nano: 10 * USD });
      expect((await paymentRows(accountId))[0]).toMatchObject({ id: paymentId, refunded_nano: 10 * USD, disputed_nano: 0 });
    }
  });

  it("a $5 refund, then a chargeback delivered before the refund, then won: $5 of credits stay taken back", async () => {
    const { accountId, sessionId, paymentIntent } = await paidPayment(1000);
    for (const e of await sentEvents(sessionId)) await delivered(e);
    await refund(paymentIntent, 500);
    const dispute = await openDispute(paymentIntent, 580);
    const [refunded] = await sentEvents(paymentIntent).then((es) => es.filter((e) => e.type === "charge.refunded"));
    const [created] = await sentEvents(dispute.id);
    expect(await delivered(created!)).toBe(200);
    expect(await delivered(refunded!)).toBe(200);
    expect(await audit(accountId), "the refund and the open dispute").toMatchObject({ credits_nano: 0 });
    await closeDispute(dispute.id, "won");
    const closed = (await sentEvents(dispute.id)).find((e) => e.type === "charge.dispute.closed")!;
    expect(await delivered(closed)).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 5 * USD, reversed_nano: 5 * USD });
  });

  it("a refund the card network sends back (charge.refund.updated): its credits come back", async () => {
    const { accountId, sessionId, paymentIntent } = await paidPayment(1000);
    const made = await refund(paymentIntent, 400);
    for (const e of await sentEvents(sessionId, paymentIntent)) expect(await delivered(e)).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 6 * USD });
    await failRefund(made.id);
    const [updated] = (await sentEvents(made.id)).filter((e) => e.type === "charge.refund.updated");
    expect(await delivered(updated!)).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 10 * USD, reversed_nano: 0 });
    expect((await paymentRows(accountId))[0]).toMatchObject({ refunded_nano: 0, disputed_nano: 0 });
  });

  it("Stripe's API unreachable: the webhook answers 500 with nothing written, and Stripe's next delivery applies it", async () => {
    const { accountId, sessionId, paymentIntent, paymentId } = await paidPayment(1000);
    for (const e of await sentEvents(sessionId)) expect(await delivered(e)).toBe(200);
    await refund(paymentIntent, 300);
    const [refunded] = (await sentEvents(paymentIntent)).filter((e) => e.type === "charge.refunded");
    // The same Worker with Stripe's API at an address where nothing listens.
    const offline = { ...env, STRIPE_API_URL: "http://127.0.0.1:9" };
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://switchyard.test/webhooks/stripe", {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": refunded!.signature },
        body: refunded!.payload,
      }),
      offline,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(500);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 10 * USD, reversals: 0 });
    expect((await paymentRows(accountId))[0]).toMatchObject({ id: paymentId, refunded_nano: 0 });
    const eventId = (JSON.parse(refunded!.payload) as { id: string }).id;
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM stripe_events WHERE id = ?").bind(eventId).first()).toEqual({ n: 0 });
    // Stripe delivers it again once the API answers.
    expect(await delivered(refunded!)).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 7 * USD, reversed_nano: 3 * USD });
  });

  it("a reading of the charge older than the one applied (two events processed at once) changes nothing", async () => {
    const { accountId, sessionId, paymentIntent } = await paidPayment(1000);
    await refund(paymentIntent, 500);
    const events = await sentEvents(sessionId, paymentIntent);
    const deps = (await connectedPaymentDeps(env))!;
    for (const e of events) await applyStripeEvent(deps, JSON.parse(e.payload) as Stripe.Event);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 5 * USD });
    // A handler that read the charge before (its clock says earlier) and writes after: stale, refused.
    const dispute = await openDispute(paymentIntent, 580);
    const [created] = await sentEvents(dispute.id);
    const late = await applyStripeEvent({ ...deps, now: () => 1 }, JSON.parse(created!.payload) as Stripe.Event);
    expect(late.outcome).toMatch(/^stale/);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 5 * USD });
    expect(await delivered(created!)).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0 });
  });

  // Each case: what happens at Stripe to a paid $10 of credits ($10.80 charged), and the credits that must
  // remain. Every order of the events Stripe sends about it (the checkout's own among them) is delivered
  // to a payment of its own — the credits must be right — then all of them again newest first (late
  // duplicates): still the same credits.
  // (`completionFirst`: the checkout's event comes first and the rest in every order — 24 orders, not 120.)
  type Case = { name: string; happen: (pi: string) => Promise<void>; credits: number; completionFirst?: boolean };
  const CASES: Case[] = [
    {
      name: "refund $5 → chargeback of the rest → won",
      happen: async (pi) => {
        await refund(pi, 500);
        await closeDispute((await openDispute(pi, 580)).id, "won");
      },
      credits: 5 * USD,
    },
    {
      name: "refund $5 → chargeback of the rest → lost",
      happen: async (pi) => {
        await refund(pi, 500);
        await closeDispute((await openDispute(pi, 580)).id, "lost");
      },
      credits: 0,
    },
    {
      name: "inquiry → full refund → closed by it (warning_closed)",
      happen: async (pi) => {
        await openInquiry(pi);
        await refund(pi);
      },
      credits: 0,
    },
    {
      name: "inquiry → refund of the credits → closed (charge_refunded)",
      happen: async (pi) => {
        const inquiry = await openInquiry(pi);
        await refund(pi, 1000);
        await closeDispute(inquiry.id, "charge_refunded");
      },
      credits: 0,
    },
    {
      name: "inquiry reviewed → partial refund $2 → warning_closed",
      happen: async (pi) => {
        const inquiry = await openInquiry(pi);
        await reviewDispute(inquiry.id);
        await refund(pi, 200);
        await closeDispute(inquiry.id, "warning_closed");
      },
      credits: 8 * USD,
      completionFirst: true,
    },
    {
      name: "partial refunds $3, $2, $1",
      happen: async (pi) => {
        for (const cents of [300, 200, 100]) await refund(pi, cents);
      },
      credits: 4 * USD,
    },
  ];

  for (const c of CASES) {
    it(`every delivery order ends at the same credits: ${c.name}`, { timeout: 60_000 }, async () => {
      // One account for the case (each order on a payment of its own): what each order leaves is the change in its credits.
      const accountId = await payerAccount();
      const shape = await paidPayment(1000, accountId);
      await c.happen(shape.paymentIntent);
      const count = (await sentEvents(shape.sessionId, shape.paymentIntent)).length;
      // Events are oldest first: the checkout's completion is the first.
      const indices = [...Array(count).keys()];
      const orders = c.completionFirst ? permutations(indices.slice(1)).map((o) => [0, ...o]) : permutations(indices);
      // Each event is applied as the webhook applies a verified one (the signed path is tested above: here
      // are hundreds of deliveries, and each request through the test's own Worker slows the next ones).
      const deps = (await connectedPaymentDeps(env))!;
      const apply = async (e: SimEvent) => expect((await applyStripeEvent(deps, JSON.parse(e.payload) as Stripe.Event)).done).not.toBe("ignored");
      const credits = async () => (await ledgerFor(env, accountId).totals()).creditsNano;
      const wrong: string[] = [];
      for (const order of orders) {
        const p = await paidPayment(1000, accountId);
        await c.happen(p.paymentIntent);
        const events = await sentEvents(p.sessionId, p.paymentIntent);
        expect(events).toHaveLength(count);
        const named = order.map((i) => events[i]!.type).join(" → ");
        const before = await credits();
        for (const i of order) await apply(events[i]!);
        const once = (await credits()) - before;
        if (once !== c.credits) wrong.push(`${named}: ${once}`);
        for (const i of [...order].reverse()) await apply(events[i]!);
        const twice = (await credits()) - before;
        if (twice !== c.credits) wrong.push(`${named}, then each again newest first: ${twice}`);
        const row = await env.DB.prepare("SELECT refunded_nano + disputed_nano AS taken FROM payments WHERE id = ?")
          .bind(p.paymentId)
          .first<{ taken: number }>();
        if (row!.taken !== 10 * USD - c.credits) wrong.push(`${named}: the payment row says ${row!.taken} taken back`);
      }
      expect(orders).toHaveLength(24);
      expect(wrong).toEqual([]);
    });
  }
});

describe("reconciliation: Stripe's API when a webhook is late or lost", () => {
  it("coming back from checkout before the webhook: the page asks Stripe, grants once, and the late webhook adds nothing", async () => {
    const { client, accountId, paymentId, sessionId } = await paidCheckout("11.50");
    const page = (await client.page(`/settings/credits?checkout=${paymentId}`)).html;
    expect(textOf(page)).toContain("Payment received: $11.50 of credits added.");
    expect(await audit(accountId)).toMatchObject({ credits_nano: 11.5 * USD, grants: 1 });
    for (const e of await eventsAbout(sessionId)) expect((await deliverEvent(e)).status).toBe(200);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 11.5 * USD, grants: 1 });
    expect(textOf(page)).toMatch(/\$11\.50 \$0\.80 Stripe Succeeded/);
  });

  it("the Cron Trigger finishes paid sessions whose webhook never came, and a payment left charged by a crash", async () => {
    const a = await paidCheckout("6");
    const b = await signUp();
    await env.DB.prepare(
      "INSERT INTO payments (id, account_id, provider, amount_nano, fee_nano, status, reference, created_at) VALUES (?, ?, 'stripe', ?, 80000000, 'charged', 'pi_crash', ?)",
    )
      .bind(`pay_${"c".repeat(43)}`, b.accountId, 9 * USD, Date.now())
      .run();
    await cron();
    await cron();
    expect(await audit(a.accountId)).toMatchObject({ credits_nano: 6 * USD, grants: 1 });
    expect(await audit(b.accountId)).toMatchObject({ credits_nano: 9 * USD, grants: 1 });
  });

  it("cancelled at checkout: the session is expired at Stripe, nothing charged, and it can no longer be paid", async () => {
    const { client, accountId } = await signUp();
    const { paymentId, sessionId } = await checkout(client, "8");
    const page = (await client.page(`/settings/credits?cancelled=${paymentId}`)).html;
    expect(textOf(page)).toContain("Checkout cancelled. Nothing was charged.");
    expect(await stripeApi<Session>("GET", `/v1/checkout/sessions/${sessionId}`)).toMatchObject({ status: "expired" });
    expect(await paymentRows(accountId)).toMatchObject([{ status: "failed" }]);
    await expect(paySession(sessionId)).rejects.toThrow();
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0 });
  });

  it("a session Stripe expired fails its payment (webhook); a payment whose session was never made fails after the abandon time", async () => {
    const { client, accountId } = await signUp();
    const { sessionId } = await checkout(client, "9");
    await stripeApi("POST", `/v1/checkout/sessions/${sessionId}/expire`);
    const expired = (await eventsAbout(sessionId)).find((e) => e.type === "checkout.session.expired")!;
    expect(await (await deliverEvent(expired)).json()).toEqual({ received: true, outcome: "expired: nothing charged" });
    await env.DB.prepare("INSERT INTO payments (id, account_id, provider, amount_nano, status, created_at) VALUES (?, ?, 'stripe', ?, 'pending', ?)")
      .bind(`pay_${"o".repeat(43)}`, accountId, 5 * USD, Date.now() - 16 * 60_000)
      .run();
    await env.DB.prepare("INSERT INTO payments (id, account_id, provider, amount_nano, status, created_at) VALUES (?, ?, 'stripe', ?, 'pending', ?)")
      .bind(`pay_${"y".repeat(43)}`, accountId, 5 * USD, Date.now())
      .run();
    await cron();
    const status = Object.fromEntries((await paymentRows(accountId)).map((p) => [p.checkout_session ?? p.id, p.status]));
    expect(status).toEqual({ [sessionId]: "failed", [`pay_${"o".repeat(43)}`]: "failed", [`pay_${"y".repeat(43)}`]: "pending" });
    expect(await audit(accountId)).toMatchObject({ credits_nano: 0 });
  });
});

describe("reconciliation nobody can starve: limits on checkouts, fair cron runs, bounded Stripe calls", () => {
  const s = settings(env);
  /** Stripe API calls the simulator received about these sessions. */
  const callsAbout = async (sessions: Set<string>) =>
    (await stripeCalls("/v1/checkout/sessions/")).requests.filter((r) => sessions.has(r.path.split("/")[4]!)).length;

  it("one account's 100 open checkouts do not fill a Cron Trigger run: another account's paid payment whose webhook was lost is granted", async () => {
    const attacker = await payerAccount();
    // Opened ten minutes before the other payment (the oldest first filled the run before).
    const theirs = new Set<string>();
    for (let i = 0; i < 100; i++) theirs.add((await openCheckout(500, attacker, Date.now() - 600_000)).sessionId);
    const victim = await paidPayment(1000); // its webhook never comes
    const before = await callsAbout(theirs);
    await cron();
    expect(await audit(victim.accountId)).toMatchObject({ credits_nano: 10 * USD, grants: 1 });
    expect((await paymentRows(victim.accountId))[0]).toMatchObject({ status: "succeeded" });
    // The run asked Stripe about at most PAYMENTS_RECONCILE_PER_ACCOUNT of the 100.
    expect((await callsAbout(theirs)) - before).toBe(s.PAYMENTS_RECONCILE_PER_ACCOUNT);
  });

  it("a credits page load asks Stripe about at most PAYMENTS_PAGE_RECONCILE sessions; reloads stop at the account's allowance of calls a minute", async () => {
    const { client, accountId } = await signUp();
    const theirs = new Set<string>();
    for (let i = 0; i < 100; i++) theirs.add((await openCheckout(500, accountId)).sessionId);
    const before = await callsAbout(theirs);
    expect((await client.page("/settings/credits")).status).toBe(200);
    expect((await callsAbout(theirs)) - before).toBe(s.PAYMENTS_PAGE_RECONCILE); // 100 before
    // Each load asks about sessions not looked at in the last minute; the account's allowance ends it
    // (the test runs within one minute: its timeout is shorter).
    for (let i = 0; i < 12; i++) expect((await client.page("/settings/credits")).status).toBe(200);
    expect((await callsAbout(theirs)) - before).toBe(s.STRIPE_CALLS_PER_ACCOUNT_MINUTE);
    // Its allowance spent, the account cannot start a checkout either: 429, nothing written.
    const form = await reviewForm(client, "5");
    const busy = await submit(client, form, "5");
    expect(busy.status).toBe(429);
    expect(textOf(await busy.text())).toContain("Too many payment requests for this account in the last minute. Nothing was charged.");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM payments WHERE id = ?").bind(form.paymentId).first()).toEqual({ n: 0 });
  });

  it("a checkout over the account's open limit, or over its hourly limit, is refused (429) with a clear error on the credits page", async () => {
    const { client, accountId } = await signUp();
    const form = await reviewForm(client, "5");
    const fresh = () => ({ paymentId: `pay_${"n".repeat(11)}${crypto.randomUUID().replace(/-/g, "")}`, csrf: form.csrf });
    const insert = (status: string) =>
      env.DB.prepare("INSERT INTO payments (id, account_id, provider, amount_nano, status, created_at) VALUES (?, ?, 'stripe', ?, ?, ?)")
        .bind(fresh().paymentId, accountId, 5 * USD, status, Date.now())
        .run();
    // Checkouts started earlier and left open (their sessions never made).
    for (let i = 1; i < s.PAYMENT_MAX_OPEN_CHECKOUTS; i++) await insert("pending");
    const last = fresh();
    expect((await submit(client, last, "5")).status).toBe(303);
    const over = fresh();
    const refused = await submit(client, over, "5");
    expect(refused.status).toBe(429);
    const text = textOf(await refused.text());
    expect(text).toContain(
      `This account has ${s.PAYMENT_MAX_OPEN_CHECKOUTS} checkouts not finished, the most it may have open (${s.PAYMENT_MAX_OPEN_CHECKOUTS}).`,
    );
    expect(text).toContain("Pay or cancel one of them under Recent payments");
    expect(text).toContain("Nothing was charged.");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM payments WHERE id = ?").bind(over.paymentId).first()).toEqual({ n: 0 });
    // The page lists each open checkout with a link that cancels it; cancelled, one more may start.
    const page = (await client.page("/settings/credits")).html;
    expect(page.match(/\?cancelled=pay_/g)).toHaveLength(s.PAYMENT_MAX_OPEN_CHECKOUTS);
    await client.page(`/settings/credits?cancelled=${last.paymentId}`);
    expect((await submit(client, over, "5")).status).toBe(303);
    // The hour: checkouts started (and given up) earlier in it count too.
    for (let i = s.PAYMENT_MAX_OPEN_CHECKOUTS + 2; i <= s.PAYMENT_MAX_CHECKOUTS_PER_HOUR; i++) await insert("failed");
    await client.page(`/settings/credits?cancelled=${over.paymentId}`);
    const hourly = await submit(client, fresh(), "5");
    expect(hourly.status).toBe(429);
    expect(textOf(await hourly.text())).toMatch(
      new RegExp(
        `This account started ${s.PAYMENT_MAX_CHECKOUTS_PER_HOUR} checkouts in the last hour, the most allowed; you can start another at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\. Nothing was charged\\.`,
      ),
    );
  });
});

describe("the Stripe webhook's subscription", () => {
  it("docs/payments.md lists exactly the event types the webhook acts on", () => {
    const step = /events ((?:`[a-z._]+`,?\s*(?:and\s*)?)+)/.exec(paymentsDoc.replace(/\s+/g, " "))![1]!;
    expect([...step.matchAll(/`([a-z._]+)`/g)].map((m) => m[1]).sort()).toEqual([...STRIPE_EVENT_TYPES].sort());
  });
});
