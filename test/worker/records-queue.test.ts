import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { admin, call, newAccount, recorded, storedRecords } from "./helpers";
import { syntheticRecord } from "./synthetic-record";
import { d1Ids, seedDays } from "./archive-helpers";
import { storeBatch, type StoreDeps, type StoreStep } from "../../src/generations/store-batches";
import { consumeDeadRecordBatches, storeDeps } from "../../src/generations/records-queue";
import { findArchived } from "../../src/generations/archive-read";
import { sumsBy } from "../../src/db/record-queries";
import { compactRecords, type CompactOptions, type CompactStep } from "../../src/generations/compact-records";
import type { RecordBatch } from "../../src/ledger/record-batch";
import type { NewGeneration } from "../../src/db/schema";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import { settleRecords } from "./ledger-db";

const HOUR = 3_600_000;
const STEPS: StoreStep[] = ["claimed", "written", "committed", "acknowledged"];

/** A batch of the account's records as its ledger would send it (its outbox rows put there first, so the acknowledgement has rows to drop). */
async function outboxBatch(accountId: string, records: NewGeneration[], abandoned = false): Promise<RecordBatch> {
  const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
  return runInDurableObject(stub, (instance: LedgerObject) => {
    const outbox = instance["outbox"];
    if (abandoned) for (const r of records) outbox.addAbandoned(r.id, JSON.stringify(r), Date.now());
    else settleRecords(instance["db"], records);
    outbox.assign(records.length);
    const [batch] = outbox.due(0); // the batch not sent yet: this one
    outbox.markSent([batch!.batch], Date.now());
    return batch!;
  });
}

const outboxSize = (accountId: string) =>
  runInDurableObject(env.LEDGER.get(env.LEDGER.idFromName(accountId)), (instance: LedgerObject) => instance.outboxSize());

const partsOf = (accountId: string) =>
  env.DB.prepare("SELECT day, state, records, batch FROM archive_parts WHERE account_id = ? ORDER BY day, part").bind(accountId).all();

/** A crash at `step`: the hook throws there once. */
function crashingAt(step: StoreStep): StoreDeps {
  let crashed = false;
  return {
    ...storeDeps(env),
    afterStep: (s) => {
      if (s === step && !crashed) {
        crashed = true;
        throw new Error(`crash after ${s}`);
      }
    },
  };
}

describe("the records store (records queue → R2, index and hourly rollups in D1)", () => {
  for (const step of STEPS)
    it(`a crash after "${step}" loses nothing and writes nothing twice: the next delivery completes the batch`, async () => {
      const { accountId } = await newAccount();
      const t = Date.now() - 2 * HOUR;
      // Each with one carrier attempt at a carrier of this test's own: endpoint health counts each once.
      const provider = `p-${accountId}`;
      const attempt = (at: number) =>
        JSON.stringify([{ model: "openai/gpt-oss-20b", provider, providerName: "P", status: 200, at, latencyMs: 100, tokensPerSecond: 50 }]);
      const records = Array.from({ length: 5 }, (_, i) => syntheticRecord(accountId, t + i * 1000, i, { providerResponses: attempt(t + i * 1000) }));
      const batch = await outboxBatch(accountId, records);
      const deps = crashingAt(step);
      await expect(storeBatch(deps, batch)).rejects.toThrow(`crash after ${step}`);
      await storeBatch(deps, batch); // the queue's retry (or the ledger's resend): the same batch
      await storeBatch(deps, batch); // and once more, after it was stored
      expect((await partsOf(accountId)).results).toEqual([{ day: new Date(t).toISOString().slice(0, 10), state: "archived", records: 5, batch: batch.batch }]);
      expect(await outboxSize(accountId)).toBe(0);
      const stored = await storedRecords(accountId, 5);
      expect(stored.map((g) => g.id).sort()).toEqual(records.map((r) => r.id).sort());
      for (const r of records) expect(await findArchived(env.DB, env.ARCHIVE, accountId, r.id)).toMatchObject({ id: r.id, costNano: r.costNano });
      const cost = records.reduce((s, r) => s + r.costNano, 0);
      const byModel = await sumsBy(env.DB, accountId, {}, "model");
      expect(byModel.reduce((s, m) => s + m.requests, 0)).toBe(5);
      expect(byModel.reduce((s, m) => s + m.costNano, 0)).toBe(cost);
      expect(await admin(`/accounts/${accountId}/audit`)).toMatchObject({ records: 5, records_cost_nano: cost, records_pending: 0, records_stored: 5 });
      expect(await env.DB.prepare("SELECT sum(counted) AS counted, sum(up) AS up FROM endpoint_minutes WHERE provider = ?").bind(provider).first()).toEqual({
        counted: 5,
        up: 5,
      });
    });

  it("the same batch delivered twice at once is stored once", async () => {
    const { accountId } = await newAccount();
    const records = Array.from({ length: 3 }, (_, i) => syntheticRecord(accountId, Date.now() - HOUR + i, i));
    const batch = await outboxBatch(accountId, records);
    await Promise.all([storeBatch(storeDeps(env), batch), storeBatch(storeDeps(env), batch)]);
    expect((await partsOf(accountId)).results).toHaveLength(1);
    expect(await admin(`/accounts/${accountId}/audit`)).toMatchObject({ records: 3, records_pending: 0 });
  });

  it("a batch spanning midnight UTC is one part per day; charts by hour and day and breakdowns count each record once", async () => {
    const { accountId } = await newAccount();
    const midnight = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const records = [-2000, -1000, 1000].map((d, i) => syntheticRecord(accountId, midnight + d, i, { model: "openai/gpt-oss-20b", costNano: 100 * (i + 1) }));
    await storeBatch(storeDeps(env), await outboxBatch(accountId, records));
    const parts = (await partsOf(accountId)).results as Array<{ day: string; records: number }>;
    expect(parts.map((p) => [p.day, p.records])).toEqual([
      [new Date(midnight - 1).toISOString().slice(0, 10), 2],
      [new Date(midnight).toISOString().slice(0, 10), 1],
    ]);
    expect(await sumsBy(env.DB, accountId, {}, "model")).toEqual([
      { name: "openai/gpt-oss-20b", requests: 3, costNano: 600, tokensPrompt: 100 + 101 + 102, tokensCompletion: 50 + 51 + 52, tokensCached: 0 + 1 + 2 },
    ]);
    const day = new Date(midnight).toISOString().slice(0, 10);
    expect((await sumsBy(env.DB, accountId, { from: day, to: day }, "model"))[0]).toMatchObject({ requests: 1, costNano: 300 });
  });

  it("a late settle's record stored before the abandoned record it replaces: both orders end with the later record and sums counted once", async () => {
    const { accountId } = await newAccount();
    const t = Date.now() - HOUR;
    const abandonedRecord = syntheticRecord(accountId, t, 1, {
      status: 500,
      costNano: 0,
      tokensPrompt: 0,
      tokensCompletion: 0,
      tokensCached: 0,
      providerName: null,
    });
    const settledRecord = { ...abandonedRecord, status: 200, costNano: 700, tokensPrompt: 10, tokensCompletion: 5, providerName: "Sim Carrier" };
    const first = await outboxBatch(accountId, [abandonedRecord], true);
    const second = await outboxBatch(accountId, [settledRecord]);
    // The settle arrived after the abandoned record was batched: its record carries that one, to take out again.
    expect(second.items).toEqual([{ record: JSON.stringify(settledRecord), replaced: JSON.stringify(abandonedRecord) }]);
    await storeBatch(storeDeps(env), second); // out of order: the replacement first
    await storeBatch(storeDeps(env), first);
    expect(await findArchived(env.DB, env.ARCHIVE, accountId, settledRecord.id)).toMatchObject({ status: 200, costNano: 700 });
    expect((await storedRecords(accountId, 1)).map((g) => [g.id, g.status, g.costNano])).toEqual([[settledRecord.id, 200, 700]]);
    expect(await sumsBy(env.DB, accountId, {}, "carrier")).toEqual([
      { name: "Sim Carrier", requests: 1, costNano: 700, tokensPrompt: 10, tokensCompletion: 5, tokensCached: 0 },
    ]);
    expect(await admin(`/accounts/${accountId}/audit`)).toMatchObject({ records: 1, records_cost_nano: 700, records_pending: 0 });
  });

  it("a record of another account in a batch is refused whole: nothing written", async () => {
    const { accountId } = await newAccount();
    const other = await newAccount();
    const batch = await outboxBatch(accountId, [syntheticRecord(accountId, Date.now(), 0)]);
    batch.items.push({ record: JSON.stringify(syntheticRecord(other.accountId, Date.now(), 1)) });
    await expect(storeBatch(storeDeps(env), batch)).rejects.toThrow(/another account's record/);
    expect((await partsOf(accountId)).results).toEqual([]);
    expect(await outboxSize(accountId)).toBe(1);
  });

  it("dead letters are counted in the admin's storage and audit until the batch is stored", async () => {
    const { accountId } = await newAccount();
    const batch = await outboxBatch(accountId, [syntheticRecord(accountId, Date.now(), 0)]);
    const acked: string[] = [];
    const message = { id: "m1", body: batch, attempts: 11, timestamp: new Date(), ack: () => acked.push("m1"), retry: () => {} };
    await consumeDeadRecordBatches(
      { queue: "switchyard-records-dead", messages: [message], ackAll() {}, retryAll() {} } as unknown as MessageBatch<unknown>,
      env,
    );
    expect(acked).toEqual(["m1"]);
    expect(await admin(`/accounts/${accountId}/audit`)).toMatchObject({ records_pending: 1, records_dead_batches: 1 });
    expect(await admin("/storage")).toMatchObject({ dead_record_batches: expect.any(Number) });
    // Replayed: the ledger sends it again now (the records queue's consumer stores it), no longer dead, stored once.
    expect(await admin(`/accounts/${accountId}/records/resend`, {})).toMatchObject({ batches: 1 });
    await recorded(accountId, 1);
    expect(await admin(`/accounts/${accountId}/audit`)).toMatchObject({ records: 1, records_pending: 0, records_dead_batches: 0 });
    expect((await partsOf(accountId)).results).toHaveLength(1);
  });
});

describe("compaction of the records queue's small parts", () => {
  const AFTER = 600_000;
  const options = (over: Partial<CompactOptions> = {}): CompactOptions => ({
    now: Date.now() + AFTER + 1000,
    partRecords: 100,
    afterMs: AFTER,
    daysPerRun: 1000,
    deleteAfterMs: 3_600_000,
    ...over,
  });
  /** `n` batches of two records each, stored, an hour ago (one UTC day unless that hour is just past midnight: then its own day). */
  async function smallBatches(accountId: string, n: number) {
    const t = Date.now() - HOUR;
    const records: NewGeneration[] = [];
    for (let b = 0; b < n; b++) {
      const pair = [0, 1].map((i) => syntheticRecord(accountId, t + b * 10 + i, b * 2 + i));
      await storeBatch(storeDeps(env), await outboxBatch(accountId, pair));
      records.push(...pair);
    }
    return records;
  }
  const objectsOf = async (accountId: string) => (await env.ARCHIVE.list({ prefix: `records/v2/${accountId}/` })).objects.map((o) => o.key).sort();

  for (const step of [undefined, "claimed", "written", "committed"] as const)
    it(`merges an account-day's small parts into one${step ? `; a crash after "${step}" loses nothing, merges nothing twice` : ""}`, async () => {
      const { accountId } = await newAccount();
      const records = await smallBatches(accountId, 5);
      const before = await objectsOf(accountId);
      expect(before).toHaveLength(5);
      const auditBefore = await admin(`/accounts/${accountId}/audit`);
      let crashed = false;
      const afterStep = (s: CompactStep) => {
        if (s === step && !crashed) {
          crashed = true;
          throw new Error(`crash after ${s}`);
        }
      };
      if (step) await expect(compactRecords(env.DB, env.ARCHIVE, options({ afterStep }))).rejects.toThrow(`crash after ${step}`);
      await compactRecords(env.DB, env.ARCHIVE, options());
      await compactRecords(env.DB, env.ARCHIVE, options()); // nothing left to merge
      const parts = (await partsOf(accountId)).results as Array<{ records: number; batch: string; state: string }>;
      expect(parts).toHaveLength(1);
      expect(parts[0]).toMatchObject({ records: 10, state: "archived" });
      expect(parts[0]!.batch).toMatch(/:c[0-9a-f]{16}-\d+$/);
      const stored = await storedRecords(accountId, 10);
      expect(stored.map((g) => g.id).sort()).toEqual(records.map((r) => r.id).sort());
      for (const r of records) expect(await findArchived(env.DB, env.ARCHIVE, accountId, r.id)).toMatchObject({ id: r.id, costNano: r.costNano });
      // The audit's records and money are as they were; only the objects (fewer, larger) changed.
      const { archive_objects: _o, archive_bytes: _b, ...audit } = await admin(`/accounts/${accountId}/audit`);
      const { archive_objects: _o0, archive_bytes: _b0, ...expected } = auditBefore;
      expect(audit).toEqual(expected);
      expect(audit).toMatchObject({ records: 10, records_pending: 0 });
      // The small objects stay for readers that listed them, then go.
      expect((await objectsOf(accountId)).filter((k) => before.includes(k))).toEqual(before);
      await compactRecords(env.DB, env.ARCHIVE, options({ now: Date.now() + AFTER + 3_600_000 + 2000 }));
      expect(await objectsOf(accountId)).toHaveLength(1);
    });

  it("keeps the later of two versions of a record merged together, and parts no larger than the limit", async () => {
    const { accountId } = await newAccount();
    const t = Date.now() - HOUR;
    const abandoned = syntheticRecord(accountId, t, 1, { status: 500, costNano: 0 });
    const settled = { ...abandoned, status: 200, costNano: 900 };
    await storeBatch(storeDeps(env), await outboxBatch(accountId, [abandoned], true));
    const second = await outboxBatch(accountId, [settled]);
    expect(second.items).toEqual([{ record: JSON.stringify(settled), replaced: JSON.stringify(abandoned) }]);
    await storeBatch(storeDeps(env), second);
    await smallBatches(accountId, 3);
    await compactRecords(env.DB, env.ARCHIVE, options({ partRecords: 4 }));
    const parts = (await partsOf(accountId)).results as Array<{ records: number }>;
    expect(parts.every((p) => p.records <= 4)).toBe(true);
    expect(await findArchived(env.DB, env.ARCHIVE, accountId, settled.id)).toMatchObject({ status: 200, costNano: 900 });
    const stored = await storedRecords(accountId, 7);
    expect(stored).toHaveLength(7);
    expect(stored.find((g) => g.id === settled.id)).toMatchObject({ status: 200, costNano: 900 });
  });
});

describe("moving an earlier release's records out of D1", () => {
  it("`POST /admin/records/move-from-d1` moves every record in D1 to R2, today's too; they stay readable and the audit is unchanged", async () => {
    const { accountId } = await newAccount();
    const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const seeded = [...(await seedDays(accountId, today - 3 * 86_400_000, 3, 4)), ...(await seedDays(accountId, Date.now() - 3_600_000 - 1000, 1, 1))]; // the last a second ago;
    const before = await admin(`/accounts/${accountId}/audit`);
    expect(before).toMatchObject({ records_in_d1: 13, records: 13 });
    let moved: { done: boolean; generations_in_d1: number } | undefined;
    for (let i = 0; i < 10 && !moved?.done; i++) moved = await admin("/records/move-from-d1", {});
    expect(moved).toMatchObject({ done: true });
    expect(await d1Ids(accountId)).toEqual([]);
    expect(await admin(`/accounts/${accountId}/audit`)).toMatchObject({
      records_in_d1: 0,
      records_archived: 13,
      records: 13,
      records_cost_nano: (before as { records_cost_nano: number }).records_cost_nano,
    });
    const stored = await storedRecords(accountId, 13);
    expect(stored.map((g) => g.id).sort()).toEqual(seeded.map((r) => r.id).sort());
    for (const r of seeded) expect(await findArchived(env.DB, env.ARCHIVE, accountId, r.id)).toMatchObject({ id: r.id });
  });
});

describe("the ledger's sends to the records queue", () => {
  it("a batch the queue refuses holds back no other: the rest are sent, it stays pending and goes again later, not every second", async () => {
    const { accountId } = await newAccount();
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    const records = [0, 1, 2].map((i) => syntheticRecord(accountId, Date.now(), i));
    const sent: string[] = [];
    const refused = records[1]!.id;
    const holds = (b: RecordBatch) => b.items.some((i) => i.record.includes(refused));
    const queue = {
      sendBatch: async (messages: Array<{ body: RecordBatch }>) => {
        if (messages.some((m) => holds(m.body))) throw new Error("message too large");
        sent.push(...messages.map((m) => m.body.batch));
      },
      send: async (body: RecordBatch) => {
        if (holds(body)) throw new Error("message too large");
        sent.push(body.batch);
      },
    };
    await runInDurableObject(stub, async (instance: LedgerObject, state) => {
      // Three batches: one record each (an outbox row given its own batch by the alarm's size rule is the same as this).
      for (const r of records) {
        settleRecords(instance["db"], [r]);
        instance["outbox"].assign(1);
      }
      const sentOf = () =>
        state.storage.sql
          .exec<{ gen_id: string; sent: number }>(
            "SELECT d.gen_id, b.sent_at IS NOT NULL AS sent FROM debits d JOIN record_batches b ON d.seq BETWEEN b.first_seq AND b.last_seq ORDER BY d.seq",
          )
          .toArray();
      Object.defineProperty(instance, "env", { value: { ...instance["env"], RECORDS_QUEUE: queue } });
      await instance.alarm();
      expect(sent).toHaveLength(2);
      expect(sentOf()).toEqual(records.map((r) => ({ gen_id: r.id, sent: r.id === refused ? 0 : 1 })));
      // The next try is at the ack timeout (60 s), not the flush delay (1 s).
      expect((await state.storage.getAlarm())! - Date.now()).toBeGreaterThan(30_000);
    });
  });
});

describe("GET /admin/accounts/<ref>/records", () => {
  it("lists the account's newest stored records with their D1 column names; a bad limit is a 400", async () => {
    const { accountId } = await newAccount();
    const t = Date.now() - HOUR;
    const records = [0, 1, 2].map((i) => syntheticRecord(accountId, t + i * 1000, i));
    await storeBatch(storeDeps(env), await outboxBatch(accountId, records));
    const listed = await admin<{ data: Array<Record<string, unknown>>; more: boolean }>(`/accounts/${accountId}/records?limit=2`);
    expect(listed.more).toBe(true);
    expect(listed.data.map((r) => [r.id, r.cost_nano, r.inbound_api])).toEqual([
      [records[2]!.id, records[2]!.costNano, "chat"],
      [records[1]!.id, records[1]!.costNano, "chat"],
    ]);
    for (const q of ["limit=0", "limit=501", "offset=3"]) {
      const res = await call(`/admin/accounts/${accountId}/records?${q}`, { headers: { authorization: "Bearer test-admin-token" } });
      expect(res.status, q).toBe(400);
    }
  });
});
