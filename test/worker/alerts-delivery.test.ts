import { describe, it, expect } from "vitest";
import { env, createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import worker from "../../src/index";
import { alertDeps, consumeAlerts, consumeDeadAlerts, retryDelayS, type AlertDeps } from "../../src/alerts/alerts-queue";
import { addEndpoint, listDeliveries, removeEndpoint } from "../../src/alerts/endpoint-store";
import type { AlertEvent, AlertMessage } from "../../src/alerts/events";
import { SIGNATURE_HEADER, signatureHeader, verifySignature } from "../../src/webhooks/sign";
import { newAccount } from "./helpers";

// The alerts queue (src/alerts/alerts-queue.ts): an alert fans out to the account's endpoints, each delivery
// signed, logged, retried with backoff, given up to the dead letters; the receiver is played by the test.

type Received = { url: string; headers: Headers; body: string };

/** The consumer's dependencies with the test's receiver (answering each POST with the next status) and its own queue. */
function testDeps(statuses: number[], more: Partial<AlertDeps["settings"]> = {}) {
  const received: Received[] = [];
  const queued: AlertMessage[] = [];
  const base = alertDeps(env);
  const deps: AlertDeps = {
    ...base,
    queue: {
      sendBatch: async (m: Iterable<MessageSendRequest<AlertMessage>>) => void queued.push(...[...m].map((x) => x.body)),
    } as unknown as Queue<AlertMessage>,
    fetch: async (input, init) => {
      received.push({ url: String(input), headers: new Headers(init?.headers), body: String(init?.body) });
      return new Response("ok", { status: statuses.shift() ?? 200 });
    },
    now: () => NOW,
    settings: { ...base.settings, ...more },
  };
  return { deps, received, queued };
}
const NOW = Date.UTC(2026, 10, 29, 1, 0, 0);

async function run(messages: AlertMessage[], deps: AlertDeps, attempts = 1, dead = false) {
  const batch = createMessageBatch<AlertMessage>(
    dead ? "switchyard-alerts-dead" : "switchyard-alerts",
    messages.map((body, i) => ({ id: `m${i}-${Math.random()}`, timestamp: new Date(), attempts, body })),
  );
  // The delays asked for (the queue's result lists the retried messages, not their delays).
  const delays: Array<number | undefined> = [];
  const seen: Message<AlertMessage>[] = batch.messages.map((m) => ({
    id: m.id,
    timestamp: m.timestamp,
    body: m.body,
    attempts: m.attempts,
    ack: () => m.ack(),
    retry: (o?: QueueRetryOptions) => {
      delays.push(o?.delaySeconds);
      m.retry(o);
    },
  }));
  const ctx = createExecutionContext();
  const viewed = { ...batch, queue: batch.queue, messages: seen, retryAll: batch.retryAll.bind(batch), ackAll: batch.ackAll.bind(batch) };
  await (dead ? consumeDeadAlerts(viewed, deps) : consumeAlerts(viewed, deps));
  return { ...(await getQueueResult(batch, ctx)), delays };
}

const keyAlert = (accountId: string, keyHash: string): AlertEvent => ({
  id: `alrt_${crypto.randomUUID().replaceAll("-", "")}`,
  created: NOW / 1000,
  account_id: accountId,
  type: "key.budget_threshold",
  data: { key_hash: keyHash, threshold_percent: 80, limit_usd: 10, usage_usd: 8.01, limit_reset: "monthly", window_start: "2026-11-01" },
});

describe("alert deliveries", () => {
  it("an alert fans out to each endpoint, named with its key; each delivery is signed over `<timestamp>.<body>` and logged", async () => {
    const { accountId, hash, label } = await newAccount(1);
    const box = alertDeps(env).box!;
    const a = await addEndpoint(env.DB, box, accountId, "https://hooks.example.test/a", 10, NOW);
    const b = await addEndpoint(env.DB, box, accountId, "https://hooks.example.test/b", 10, NOW);
    if ("error" in a || "error" in b) throw new Error("endpoints not added");
    expect(a.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const { deps, received, queued } = testDeps([200, 200]);
    const event = keyAlert(accountId, hash);
    expect((await run([{ v: 1, kind: "event", event }], deps)).explicitAcks).toHaveLength(1);
    expect(queued.map((m) => (m.kind === "deliver" ? m.endpointId : m.kind))).toEqual([a.endpoint.id, b.endpoint.id]);
    expect(queued[0]!.event).toMatchObject({ id: event.id, data: { key_hash: hash, key_label: label, key_name: expect.any(String) } });
    expect(received).toEqual([]); // nothing posted by the fan-out itself
    expect((await run(queued, deps)).explicitAcks).toHaveLength(2);
    expect(received.map((r) => r.url)).toEqual(["https://hooks.example.test/a", "https://hooks.example.test/b"]);
    const first = received[0]!;
    expect(JSON.parse(first.body)).toEqual(queued[0]!.event);
    expect(first.headers.get("content-type")).toBe("application/json");
    expect(first.headers.get("switchyard-event-id")).toBe(event.id);
    const header = first.headers.get(SIGNATURE_HEADER)!;
    expect(header).toBe(await signatureHeader(a.secret, NOW / 1000, first.body));
    expect(await verifySignature(a.secret, header, first.body, NOW / 1000)).toBe(true);
    expect(await verifySignature(b.secret, header, first.body, NOW / 1000)).toBe(false); // another endpoint's secret
    expect(await verifySignature(a.secret, header, first.body.replace("8.01", "0.01"), NOW / 1000)).toBe(false); // altered
    expect(await verifySignature(a.secret, header, first.body, NOW / 1000 + 301)).toBe(false); // replayed later than 5 minutes
    const log = await listDeliveries(env.DB, accountId, 10);
    expect(log.map((d) => [d.endpointId, d.eventId, d.outcome, d.status, d.attempt])).toEqual([
      [b.endpoint.id, event.id, "delivered", 200, 1],
      [a.endpoint.id, event.id, "delivered", 200, 1],
    ]);
  });

  it("a failed delivery is retried with a doubling delay, then succeeds; one that fails every attempt is logged as given up", async () => {
    const { accountId, hash } = await newAccount(1);
    const added = await addEndpoint(env.DB, alertDeps(env).box!, accountId, "https://hooks.example.test/flaky", 10, NOW);
    if ("error" in added) throw new Error(added.error);
    const message: AlertMessage = { v: 1, kind: "deliver", endpointId: added.endpoint.id, event: keyAlert(accountId, hash) };
    const { deps } = testDeps([500, 503, 200]);
    expect(await run([message], deps, 1)).toMatchObject({ retryMessages: [expect.anything()], delays: [30] });
    expect(await run([message], deps, 2)).toMatchObject({ retryMessages: [expect.anything()], delays: [60] });
    expect((await run([message], deps, 3)).explicitAcks).toHaveLength(1);
    expect([1, 2, 3, 7, 8, 20].map((n) => retryDelayS(30, n))).toEqual([30, 60, 120, 1920, 3600, 3600]);
    expect((await run([message], deps, 8, true)).explicitAcks).toHaveLength(1);
    const log = await listDeliveries(env.DB, accountId, 10);
    expect(log.map((d) => [d.outcome, d.status, d.attempt, d.error])).toEqual([
      ["gave up", null, 8, "every attempt failed"],
      ["delivered", 200, 3, null],
      ["failed", 503, 2, "the endpoint answered 503"],
      ["failed", 500, 1, "the endpoint answered 500"],
    ]);
  });

  it("the delivery log keeps the newest ALERT_DELIVERY_LOG_ROWS of the account; a removed endpoint gets nothing; another account's endpoint is not found", async () => {
    const { accountId, hash } = await newAccount(1);
    const other = await newAccount(1);
    const added = await addEndpoint(env.DB, alertDeps(env).box!, accountId, "https://hooks.example.test/log", 10, NOW);
    if ("error" in added) throw new Error(added.error);
    const { deps, received } = testDeps([], { ALERT_DELIVERY_LOG_ROWS: 3 });
    const events = Array.from({ length: 5 }, () => keyAlert(accountId, hash));
    await run(
      events.map((event) => ({ v: 1, kind: "deliver", endpointId: added.endpoint.id, event })),
      deps,
    );
    expect((await listDeliveries(env.DB, accountId, 10)).map((d) => d.eventId)).toEqual(
      events
        .slice(2)
        .map((e) => e.id)
        .reverse(),
    );
    // Another account's alert naming this endpoint: not found there, nothing posted.
    expect(
      (await run([{ v: 1, kind: "deliver", endpointId: added.endpoint.id, event: keyAlert(other.accountId, other.hash) }], deps)).explicitAcks,
    ).toHaveLength(1);
    expect(await removeEndpoint(env.DB, other.accountId, added.endpoint.id)).toBe(false);
    expect(await removeEndpoint(env.DB, accountId, added.endpoint.id)).toBe(true);
    expect((await run([{ v: 1, kind: "deliver", endpointId: added.endpoint.id, event: keyAlert(accountId, hash) }], deps)).explicitAcks).toHaveLength(1);
    expect(received).toHaveLength(5);
  });

  it("an account has at most ALERT_ENDPOINTS_PER_ACCOUNT endpoints", async () => {
    const { accountId } = await newAccount(1);
    const box = alertDeps(env).box!;
    for (let i = 0; i < 2; i++) expect(await addEndpoint(env.DB, box, accountId, `https://hooks.example.test/${i}`, 2, NOW)).toHaveProperty("secret");
    expect(await addEndpoint(env.DB, box, accountId, "https://hooks.example.test/3", 2, NOW)).toEqual({
      error: expect.stringContaining("at most 2 webhook endpoints"),
    });
  });

  it("the queue is wired: a delivery sent to ALERTS_QUEUE reaches the consumer, which posts it and logs the answer", async () => {
    const { accountId, hash } = await newAccount(1);
    // The carrier simulator plays an endpoint that answers 404 (no such route there): a failed attempt, logged.
    const url = `${env.CARRIER_BASE_URL_OVERRIDE}/alerts-receiver`;
    const added = await addEndpoint(env.DB, alertDeps(env).box!, accountId, url, 10, Date.now());
    if ("error" in added) throw new Error(added.error);
    const event = keyAlert(accountId, hash);
    await env.ALERTS_QUEUE.send({ v: 1, kind: "deliver", endpointId: added.endpoint.id, event });
    const deadline = Date.now() + 10_000;
    let log = await listDeliveries(env.DB, accountId, 10);
    while (log.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      log = await listDeliveries(env.DB, accountId, 10);
    }
    expect(log.map((d) => [d.eventId, d.url, d.outcome, d.status])).toEqual([[event.id, url, "failed", 404]]);
  });

  it("the worker routes the alerts queue and its dead letters to their consumers", async () => {
    const ctx = createExecutionContext();
    const bad = createMessageBatch("switchyard-alerts", [{ id: "bad", timestamp: new Date(), attempts: 1, body: { v: 1, kind: "nonsense" } }]);
    await worker.queue(bad, env);
    expect((await getQueueResult(bad, ctx)).explicitAcks).toEqual(["bad"]); // never deliverable: dropped, logged
    const { accountId, hash } = await newAccount(1);
    const added = await addEndpoint(env.DB, alertDeps(env).box!, accountId, "https://hooks.example.test/dead", 10, NOW);
    if ("error" in added) throw new Error(added.error);
    const event = keyAlert(accountId, hash);
    const dead = createMessageBatch("switchyard-alerts-dead", [
      { id: "d", timestamp: new Date(), attempts: 1, body: { v: 1, kind: "deliver", endpointId: added.endpoint.id, event } },
    ]);
    await worker.queue(dead, env);
    expect((await getQueueResult(dead, ctx)).explicitAcks).toEqual(["d"]);
    expect((await listDeliveries(env.DB, accountId, 10)).map((d) => [d.eventId, d.outcome])).toEqual([[event.id, "gave up"]]);
  });
});
