import { describe, it, expect } from "vitest";
import type { SettleRequest } from "../../src/ledger/contract";
import { settleBatch } from "../../src/ledger/object/settles";
import { totals } from "../../src/ledger/object/balance";
import { fund, genRecord, withLedgerDb } from "./ledger-db";

// The monthly allowance of BYOK requests free of the fee (BYOK_FREE_REQUESTS_PER_MONTH, docs/byok.md), in
// the ledger's settle (src/ledger/object/byok-allowance.ts): counted once per request, per UTC month.
const byok = (genId: string, feeNano: number): SettleRequest => ({ genId, keyHash: "k", costNano: feeNano, record: genRecord(genId, feeNano), byok: true });
const plain = (genId: string, costNano: number): SettleRequest => ({ genId, keyHash: "k", costNano, record: genRecord(genId, costNano) });
const debits = (db: { sql: SqlStorage }) =>
  db.sql
    .exec<{ gen_id: string; cost_nano: number; record: string }>("SELECT gen_id, cost_nano, record FROM debits ORDER BY gen_id")
    .toArray()
    .map((d) => ({ gen: d.gen_id, cost: d.cost_nano, recorded: (JSON.parse(d.record) as { costNano: number }).costNano }));

describe("the BYOK allowance", () => {
  it("waives the fee of the month's first N BYOK requests, once each however often settled; then charges it; other requests untouched", () =>
    withLedgerDb((db) => {
      fund(db, 1_000_000);
      const ledger = { ...db, timings: { ...db.timings, byokFreeRequestsPerMonth: 2 } };
      expect(settleBatch(ledger, [byok("a", 100), plain("p", 7_000), byok("b", 200), byok("a", 100)])).toBe(3);
      // A retry of "b" counts nothing more: "c" is the third of the month, charged.
      expect(settleBatch(ledger, [byok("b", 200), byok("c", 300)])).toBe(1);
      expect(debits(db)).toEqual([
        { gen: "a", cost: 0, recorded: 0 },
        { gen: "b", cost: 0, recorded: 0 },
        { gen: "c", cost: 300, recorded: 300 },
        { gen: "p", cost: 7_000, recorded: 7_000 },
      ]);
      expect(totals(db.sql).usageNano).toBe(7_300);
      // A new UTC month starts a new allowance.
      db.clock.now = Date.UTC(2026, 6, 1, 0, 0, 1);
      expect(settleBatch(ledger, [byok("d", 400)])).toBe(1);
      expect(debits(db).find((d) => d.gen === "d")).toEqual({ gen: "d", cost: 0, recorded: 0 });
      expect(db.sql.exec("SELECT month, requests FROM byok_months ORDER BY month").toArray()).toEqual([
        { month: "2026-06", requests: 3 },
        { month: "2026-07", requests: 1 },
      ]);
    }));

  it("an allowance of 0 charges every fee", () =>
    withLedgerDb((db) => {
      fund(db, 1_000_000);
      expect(db.timings.byokFreeRequestsPerMonth).toBe(0); // the tests' setting
      settleBatch(db, [byok("x", 123)]);
      expect(debits(db)).toEqual([{ gen: "x", cost: 123, recorded: 123 }]);
    }));
});
