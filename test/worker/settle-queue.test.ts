import { describe, it, expect } from "vitest";
import { env, createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import worker from "../../src/index";
import { settleMessages, type SettleMessage } from "../../src/ledger/settle-queue";
import { ledgerFor } from "../../src/ledger/ledger";
import type { NewGeneration } from "../../src/db/schema";
import { ledgerRecord } from "./synthetic-record";

const record = (id: string, accountId: string, costNano: number): NewGeneration =>
  ledgerRecord(id, { accountId, streamed: true, createdAt: Date.now(), costNano });
const settle = (genId: string, accountId: string, costNano: number) => ({ genId, keyHash: "k", costNano, record: record(genId, accountId, costNano) });

async function deliver(messages: SettleMessage[]) {
  const batch = createMessageBatch<SettleMessage>(
    "switchyard-settles",
    messages.map((body, i) => ({ id: `m${i}-${Math.random()}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return getQueueResult(batch, ctx);
}

describe("settle queue", () => {
  it("the consumer settles queued batches into each account's ledger, once per generation id however often they arrive", async () => {
    const a = "queue-a-" + Math.random();
    const b = "queue-b-" + Math.random();
    await ledgerFor(env, a).grant({ grantId: "c", amountNano: 10_000, source: "test" });
    const messages = [
      { v: 1 as const, accountId: a, items: [settle(`gen-qa1-${a}`, a, 100), settle(`gen-qa2-${a}`, a, 200)], slices: [] },
      { v: 1 as const, accountId: b, items: [settle(`gen-qb1-${b}`, b, 300)], slices: [] },
    ];
    expect(await deliver(messages)).toMatchObject({ explicitAcks: expect.arrayContaining([expect.any(String), expect.any(String)]), retryMessages: [] });
    await deliver(messages); // delivered again: nothing more is debited
    expect((await ledgerFor(env, a).totals()).usageNano).toBe(300);
    expect((await ledgerFor(env, b).totals()).usageNano).toBe(300);
    expect((await ledgerFor(env, a).pendingGeneration(`gen-qa2-${a}`))?.costNano).toBe(200);
  });

  it("a message the consumer cannot apply is retried (it ends in the dead-letter queue), never acknowledged or half applied", async () => {
    const a = "queue-bad-" + Math.random();
    const broken = { ...settle(`gen-bad-${a}`, a, 5), costNano: "five" as unknown as number };
    const result = await deliver([{ v: 1, accountId: a, items: [settle(`gen-ok-${a}`, a, 5), broken], slices: [] }]);
    expect(result.retryMessages).toHaveLength(1);
    expect(result.explicitAcks).toEqual([]);
    expect((await ledgerFor(env, a).totals()).usageNano).toBe(0);
  });

  it("splits a large batch into messages under the queue's size limit, slice reports with the last", () => {
    const big = Array.from({ length: 64 }, (_, i) => ({
      ...settle(`gen-big-${i}`, "x", 1),
      record: { ...record(`gen-big-${i}`, "x", 1), errorMessage: "e".repeat(1200), userAgent: "u".repeat(300) },
    }));
    const messages = settleMessages("x", big, [{ leaseId: "L", admitted: 64, release: true }]);
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages) expect(new TextEncoder().encode(JSON.stringify(m)).byteLength).toBeLessThan(128 * 1024);
    expect(messages.flatMap((m) => m.items).map((i) => i.genId)).toEqual(big.map((i) => i.genId));
    expect(messages.map((m) => m.slices.length)).toEqual([...Array(messages.length - 1).fill(0), 1]);
  });

  it("the queue is wired: a message sent to SETTLE_QUEUE reaches the consumer and the ledger", async () => {
    const a = "queue-live-" + Math.random();
    await env.SETTLE_QUEUE.send({ v: 1, accountId: a, items: [settle(`gen-live-${a}`, a, 777)], slices: [] });
    const deadline = Date.now() + 10_000;
    let usage = 0;
    while (usage === 0 && Date.now() < deadline) {
      usage = (await ledgerFor(env, a).totals()).usageNano;
      if (usage === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(usage).toBe(777);
  });
});
