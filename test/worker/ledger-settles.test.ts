import { describe, it, expect } from "vitest";
import type { SettleRequest } from "../../src/ledger/contract";
import { admit, lease } from "../../src/ledger/object/holds";
import { expire } from "../../src/ledger/object/expiry";
import { settleBatch } from "../../src/ledger/object/settles";
import { totals } from "../../src/ledger/object/balance";
import { fund, genRecord, withLedgerDb, type TestLedgerDb } from "./ledger-db";

// src/ledger/object/settles.ts on its own: debits exactly once per generation id, usage, slices, the outbox.

const item = (genId: string, costNano: number, more: Partial<SettleRequest> = {}): SettleRequest => ({
  genId,
  keyHash: "k",
  costNano,
  record: genRecord(genId, costNano),
  ...more,
});
const keyUsage = (db: TestLedgerDb) =>
  db.sql.exec<{ key_hash: string; day: string; usage_nano: number; byok_nano: number }>("SELECT * FROM key_usage ORDER BY key_hash").toArray();

describe("ledger settles", () => {
  it("debits each generation once, however often it is listed or retried; releases own holds; hands records to the outbox", () =>
    withLedgerDb((db) => {
      fund(db, 10_000);
      admit(db, { genId: "a", keyHash: "k", limitNano: null, holdNano: 5_000, paid: true, abandoned: genRecord("a", 0) });
      expect(settleBatch(db, [item("a", 1_234), item("b", 66, { keyHash: "j" }), item("a", 1_234)])).toBe(2);
      expect(settleBatch(db, [item("a", 1_234), item("b", 66, { keyHash: "j" })])).toBe(0);
      expect(totals(db.sql)).toEqual({ creditsNano: 10_000, usageNano: 1_300, heldNano: 0, granted: true });
      expect(keyUsage(db)).toEqual([
        { key_hash: "j", day: "2026-06-10", usage_nano: 66, byok_nano: 0 },
        { key_hash: "k", day: "2026-06-10", usage_nano: 1_234, byok_nano: 0 },
      ]);
      expect(db.outbox.size()).toBe(2);
      expect(db.outbox.pending("a")).toMatchObject({ id: "a", costNano: 1_234 });
      // The outbox goes on by the alarm, after the flush delay.
      expect(db.alarms.at(-1)).toBe(db.timings.flushDelayMs);
    }));

  it("a BYOK request's upstream cost becomes its key's BYOK usage, once, beside the fee it is debited; a waived fee still counts it", () =>
    withLedgerDb((db) => {
      fund(db, 10_000);
      const byok = (genId: string, fee: number, upstream: number): SettleRequest => ({
        ...item(genId, fee),
        byok: true,
        record: { ...genRecord(genId, fee), byok: true, byokUpstreamNano: upstream },
      });
      // The month's allowance is spent by the first: its fee is waived, its upstream cost still counts.
      const ledger = { ...db, timings: { ...db.timings, byokFreeRequestsPerMonth: 1 } };
      expect(settleBatch(ledger, [byok("a", 50, 1_000), byok("b", 7, 133), item("c", 400)])).toBe(3);
      expect(settleBatch(ledger, [byok("b", 7, 133)])).toBe(0);
      expect(keyUsage(db)).toEqual([{ key_hash: "k", day: "2026-06-10", usage_nano: 407, byok_nano: 1_133 }]);
      expect(totals(db.sql)).toMatchObject({ usageNano: 407 });
    }));

  it("a batch larger than SQLite's bound-parameter limit settles whole", () =>
    withLedgerDb((db) => {
      fund(db, 1_000_000);
      const items = Array.from({ length: 130 }, (_, i) => item(`g${i}`, i + 1));
      expect(settleBatch(db, items)).toBe(130);
      expect(settleBatch(db, items)).toBe(0);
      expect(totals(db.sql).usageNano).toBe((130 * 131) / 2);
    }));

  it("leased requests spend from their slice; a released slice leaves once every admitted request settled", () =>
    withLedgerDb((db) => {
      fund(db, 10_000);
      expect(lease(db, { leaseId: "s", holdNano: 100, wantNano: 1_000 })).toEqual({ ok: true, grantNano: 1_000 });
      // Released with three admitted, only two settled: the slice stays, holding what is left.
      expect(settleBatch(db, [item("x", 300, { leaseId: "s" }), item("y", 200, { leaseId: "s" })], [{ leaseId: "s", admitted: 3, release: true }])).toBe(2);
      expect(totals(db.sql)).toEqual({ creditsNano: 10_000, usageNano: 500, heldNano: 500, granted: true });
      expect(settleBatch(db, [item("z", 50, { leaseId: "s" })])).toBe(1);
      expect(totals(db.sql)).toEqual({ creditsNano: 10_000, usageNano: 550, heldNano: 0, granted: true });
      expect(db.sql.exec("SELECT 1 FROM slices").toArray()).toEqual([]);
    }));

  it("a rest given back leaves the slice once, however often it is reported", () =>
    withLedgerDb((db) => {
      fund(db, 10_000);
      lease(db, { leaseId: "s", holdNano: 100, wantNano: 1_000 });
      settleBatch(db, [], [{ leaseId: "s", admitted: 1, returnedNano: 700 }]);
      settleBatch(db, [], [{ leaseId: "s", admitted: 1, returnedNano: 700 }]);
      expect(totals(db.sql).heldNano).toBe(300);
      settleBatch(db, [], [{ leaseId: "s", admitted: 1, returnedNano: 800 }]);
      expect(totals(db.sql).heldNano).toBe(200);
    }));

  it("a settle that gives back its free slot frees it for the day it was admitted", () =>
    withLedgerDb((db) => {
      const free = { perMinute: 5, perDay: 5, perDayBought: 5, boughtNano: 1 };
      admit(db, { genId: "f", keyHash: "k", limitNano: null, holdNano: 0, paid: false, abandoned: genRecord("f", 0), free });
      expect(db.sql.exec<{ count: number }>("SELECT count FROM free_days").one().count).toBe(1);
      expect(settleBatch(db, [item("f", 0, { releaseFreeSlot: true })])).toBe(1);
      expect(db.sql.exec<{ count: number }>("SELECT count FROM free_days").one().count).toBe(0);
      expect(db.sql.exec("SELECT 1 FROM free_minute").toArray()).toEqual([]);
    }));

  it("the record rides in its debit row: nothing else is written for it, and it is pending until its batch is stored", () =>
    withLedgerDb((db) => {
      expect(settleBatch(db, [item("a", 5), item("b", 6)])).toBe(2);
      expect(db.sql.exec("SELECT COUNT(*) AS n FROM outbox").one().n).toBe(0);
      const rows = db.sql.exec<{ gen_id: string; record: string }>("SELECT gen_id, record FROM debits ORDER BY seq").toArray();
      expect(rows.map((r) => [r.gen_id, JSON.parse(r.record).costNano])).toEqual([
        ["a", 5],
        ["b", 6],
      ]);
      db.outbox.assign(10);
      const [batch] = db.outbox.due(0);
      expect(db.outbox.size()).toBe(2);
      expect(db.outbox.stored(batch!.batch)).toBe(2);
      expect(db.outbox.stored(batch!.batch)).toBe(0); // acknowledged twice: nothing more
      expect([db.outbox.size(), db.outbox.pending("a")]).toEqual([0, null]);
    }));

  for (const batched of [false, true])
    it(`a late settle supersedes its expired hold's abandoned record${batched ? " already batched: it carries that one for the store to take out" : " not batched yet: that one is never sent"}`, () =>
      withLedgerDb((db) => {
        fund(db, 10_000);
        admit(db, { genId: "late", keyHash: "k", limitNano: null, holdNano: 100, paid: true, abandoned: { ...genRecord("late", 0), status: 500 } });
        expire(db, db.clock.now + db.timings.holdTtlMs + 1);
        expect(db.outbox.pending("late")).toMatchObject({ status: 500 });
        if (batched) db.outbox.assign(10);
        expect(settleBatch(db, [item("late", 70)])).toBe(1);
        expect(db.outbox.pending("late")).toMatchObject({ costNano: 70, status: 200 });
        db.outbox.assign(10);
        const items = db.outbox.due(0).flatMap((b) => b.items);
        const abandoned = JSON.stringify({ ...genRecord("late", 0), status: 500 });
        expect(items).toEqual(
          batched
            ? [
                { record: abandoned, abandoned: true },
                { record: JSON.stringify(genRecord("late", 70)), replaced: abandoned },
              ]
            : [{ record: JSON.stringify(genRecord("late", 70)) }],
        );
        expect(settleBatch(db, [item("late", 70)])).toBe(0);
        expect(totals(db.sql).usageNano).toBe(70);
      }));
});
