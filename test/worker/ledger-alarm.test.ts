import { describe, it, expect } from "vitest";
import type { RecordBatch } from "../../src/ledger/record-batch";
import { LedgerAlarm } from "../../src/ledger/object/alarm";
import { expire, nextExpiry } from "../../src/ledger/object/expiry";
import { admit } from "../../src/ledger/object/holds";
import { settleBatch } from "../../src/ledger/object/settles";
import { fund, genRecord, settleRecords, withLedgerDb, type TestLedgerDb } from "./ledger-db";

// src/ledger/object/alarm.ts and expiry.ts on their own: what dies is expired, records leave for the queue.

const slice = (db: TestLedgerDb, leaseId: string, renewedAt: number, admitted: number, settled: number, releasedAt: number | null) =>
  db.sql.exec(
    "INSERT INTO slices (lease_id, amount_nano, created_at, renewed_at, admitted, settled, released_at) VALUES (?, 100, ?, ?, ?, ?, ?)",
    leaseId,
    renewedAt,
    renewedAt,
    admitted,
    settled,
    releasedAt,
  );
const audit = (db: TestLedgerDb) => db.sql.exec("SELECT lease_id, admitted, settled, ended FROM slice_audit ORDER BY lease_id").toArray();

function fakeQueue(refuse = false) {
  const sent: RecordBatch[] = [];
  const queue = {
    sendBatch: async (messages: Array<{ body: RecordBatch }>) => {
      if (refuse) throw new Error("queue down");
      sent.push(...messages.map((m) => m.body));
    },
    send: async (body: RecordBatch) => {
      if (refuse) throw new Error("queue down");
      sent.push(body);
    },
  };
  return { sent, queue: queue as unknown as Queue<RecordBatch> };
}

describe("ledger alarm", () => {
  it("keeps the earliest alarm: a later one asked for changes nothing, an earlier one replaces it", () => {
    const set: number[] = [];
    const alarm = new LedgerAlarm((at) => set.push(at));
    alarm.schedule(60_000);
    alarm.schedule(120_000);
    expect(set).toHaveLength(1);
    alarm.schedule(0);
    expect(set).toHaveLength(2);
    expect(set[1]).toBeLessThan(set[0]!);
    expect(alarm.at).toBe(set[1]);
  });

  it("expire ends dead holds (their abandoned record goes to the outbox) and dead or unsettled slices (kept in the audit)", () =>
    withLedgerDb((db) => {
      const { holdTtlMs, leaseTtlMs } = db.timings;
      const t0 = db.clock.now;
      fund(db, 1_000);
      admit(db, { genId: "dead", keyHash: "k", limitNano: null, holdNano: 10, paid: true, abandoned: genRecord("dead", 0) });
      slice(db, "isolate-died", t0, 4, 1, null);
      slice(db, "released-unsettled", t0, 3, 2, t0);
      const now = t0 + holdTtlMs + 1;
      slice(db, "alive", now, 2, 0, null);
      expect(nextExpiry(db)).toBe(Math.min(t0 + holdTtlMs, t0 + leaseTtlMs));
      expire(db, now);
      expect(db.sql.exec("SELECT gen_id FROM holds").toArray()).toEqual([]);
      expect(db.outbox.pending("dead")).toMatchObject({ id: "dead", costNano: 0 });
      expect(db.sql.exec("SELECT lease_id FROM slices").toArray()).toEqual([{ lease_id: "alive" }]);
      expect(audit(db)).toEqual([
        { lease_id: "isolate-died", admitted: 4, settled: 1, ended: "expired" },
        { lease_id: "released-unsettled", admitted: 3, settled: 2, ended: "released" },
      ]);
      expect(nextExpiry(db)).toBe(now + leaseTtlMs);
    }));

  it("fire sends the records when they are due, as batches, and marks them sent; an alarm before then leaves them gathering", () =>
    withLedgerDb(async (db) => {
      settleRecords(db, [genRecord("a", 5), genRecord("b", 7)]);
      const set: number[] = [];
      const { sent, queue } = fakeQueue();
      await new LedgerAlarm((at) => set.push(at)).fire(db, queue); // e.g. an expiry's alarm, just after the settle
      expect(sent).toEqual([]);
      db.clock.now += db.timings.flushDelayMs;
      await new LedgerAlarm((at) => set.push(at)).fire(db, queue);
      expect(sent.flatMap((b) => b.items.map((i) => JSON.parse(i.record).id)).sort()).toEqual(["a", "b"]);
      expect(db.sql.exec("SELECT sent_at FROM record_batches").toArray()).toEqual(sent.map(() => ({ sent_at: db.clock.now })));
      // Still pending (readable by /generation) until the store acknowledges; the alarm comes back to send again if it does not.
      expect(db.outbox.size()).toBe(2);
      expect(db.outbox.pending("a")).toMatchObject({ id: "a", costNano: 5 });
      expect(set).toHaveLength(2);
      expect(db.outbox.stored(sent[0]!.batch)).toBe(2);
      expect(db.outbox.size()).toBe(0);
      expect(db.outbox.pending("a")).toBeNull();
    }));

  it("a queue that refuses loses nothing: the batches stay, and go again at the ack timeout, not at once", () =>
    withLedgerDb(async (db) => {
      settleRecords(db, [genRecord("a", 5)]);
      db.clock.now += db.timings.flushDelayMs;
      const set: number[] = [];
      const before = Date.now();
      await new LedgerAlarm((at) => set.push(at)).fire(db, fakeQueue(true).queue);
      expect(db.sql.exec("SELECT sent_at FROM record_batches").toArray()).toEqual([{ sent_at: null }]);
      expect(set).toHaveLength(1);
      expect(set[0]).toBeGreaterThanOrEqual(before + db.timings.recordsAckTimeoutMs);
      const { sent, queue } = fakeQueue();
      db.clock.now += db.timings.recordsAckTimeoutMs;
      await new LedgerAlarm(() => {}).fire(db, queue);
      expect(sent.flatMap((b) => b.items.map((i) => JSON.parse(i.record).id))).toEqual(["a"]);
    }));
});

describe("the flush delay of a quiet account", () => {
  const growing = (db: TestLedgerDb): TestLedgerDb => ({
    ...db,
    timings: { ...db.timings, flushDelayMs: 1_000, flushMaxDelayMs: 600_000, flushTargetRecords: 10 },
  });
  /** Settles `n` records now through settleBatch (which asks for the alarm: its delay is the last of db.alarms). */
  const settleNow = (db: TestLedgerDb, n: number, tag: string) =>
    settleBatch(
      db,
      Array.from({ length: n }, (_, i) => ({ genId: `${tag}-${i}`, keyHash: "k", costNano: 1, record: genRecord(`${tag}-${i}`, 1) })),
    );

  it("grows by target ÷ records while flushes are small, up to the maximum; flushes at once when the target gathers; every record is sent within the maximum", () =>
    withLedgerDb(async (base) => {
      const db = growing(base);
      const { sent, queue } = fakeQueue();
      const delays: number[] = [];
      const sentIds = () => new Set(sent.flatMap((b) => b.items.map((i) => JSON.parse(i.record).id as string)));
      const flushOnce = async (n: number, tag: string) => {
        settleNow(db, n, tag);
        const delay = db.alarms.at(-1)!;
        delays.push(delay);
        if (delay > 0) {
          db.clock.now += delay - 1;
          await new LedgerAlarm(() => {}).fire(db, queue); // a millisecond early (an expiry's alarm, say): nothing goes
          expect(sentIds().has(`${tag}-0`)).toBe(false);
          db.clock.now += 1;
        }
        await new LedgerAlarm(() => {}).fire(db, queue); // a new LedgerAlarm each time: the object was evicted meanwhile
        expect([...sentIds()].filter((id) => id.startsWith(`${tag}-`))).toHaveLength(n);
        for (const b of sent.splice(0)) db.outbox.stored(b.batch);
      };
      for (let i = 0; i < 4; i++) await flushOnce(1, `quiet${i}`);
      await flushOnce(40, "burst");
      await flushOnce(1, "after");
      // 1 s, then ×10 a flush (one record, target 10) up to 600 s; 40 settled together reach the target: at
      // once, and the delay ÷ 4; one record then waits 150 s.
      expect(delays).toEqual([1_000, 10_000, 100_000, 600_000, 0, 150_000]);
      expect(db.outbox.flushDelay(db.timings)).toBe(600_000);
      // An account that turns busy: the tenth record waiting flushes them at once, not 600 s after the first.
      settleNow(db, 5, "busy-a");
      expect(db.alarms.at(-1)).toBe(600_000);
      db.clock.now += 1_000;
      settleNow(db, 5, "busy-b");
      expect(db.alarms.at(-1)).toBe(0);
      await new LedgerAlarm(() => {}).fire(db, queue);
      expect(sent.flatMap((b) => b.items)).toHaveLength(10);
      expect(db.outbox.flushDelay(db.timings)).toBe(600_000);
    }));

  it("a fixed delay when the maximum is the delay (the tests' default)", () =>
    withLedgerDb(async (db) => {
      const { queue } = fakeQueue();
      for (let i = 0; i < 3; i++) {
        settleNow(db, 1, `fixed${i}`);
        expect(db.alarms.at(-1)).toBe(db.timings.flushDelayMs);
        db.clock.now += db.timings.flushDelayMs;
        await new LedgerAlarm(() => {}).fire(db, queue);
      }
    }));
});

describe("a busy account's ledger size", () => {
  it("past LEDGER_RECORDS_KEEP_BYTES the prune drops the records of stored debits only, keeping the debits and every pending record", () =>
    withLedgerDb(async (base) => {
      const db: TestLedgerDb = { ...base, timings: { ...base.timings, recordsKeepBytes: 1 } };
      settleRecords(db, [genRecord("stored", 5)]);
      db.outbox.assign(10);
      for (const b of db.outbox.due(0)) db.outbox.stored(b.batch);
      settleRecords(db, [genRecord("sent", 6)]);
      db.outbox.assign(10); // in a batch the store has not acknowledged
      settleRecords(db, [genRecord("waiting", 7)]);
      await new LedgerAlarm(() => {}).fire(db, fakeQueue().queue);
      const rows = db.sql.exec<{ gen_id: string; kept: number }>("SELECT gen_id, record IS NOT NULL AS kept FROM debits ORDER BY seq").toArray();
      expect(rows).toEqual([
        { gen_id: "stored", kept: 0 },
        { gen_id: "sent", kept: 1 },
        { gen_id: "waiting", kept: 1 },
      ]);
      expect([db.outbox.size(), db.outbox.pending("sent")?.costNano, db.outbox.pending("waiting")?.costNano]).toEqual([2, 6, 7]);
      expect(settleRecords(db, [genRecord("stored", 5)])).toBe(0); // still exactly once
    }));

  it("under it, nothing is dropped", () =>
    withLedgerDb(async (db) => {
      settleRecords(db, [genRecord("stored", 5)]);
      db.outbox.assign(10);
      for (const b of db.outbox.due(0)) db.outbox.stored(b.batch);
      expect(db.outbox.dropStoredRecords(db.timings.recordsKeepBytes)).toBe(0);
      expect(db.sql.exec("SELECT record IS NOT NULL AS kept FROM debits").one().kept).toBe(1);
    }));
});
