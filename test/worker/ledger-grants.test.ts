import { describe, it, expect } from "vitest";
import { findGrant, grant, grantsSummary, reverse } from "../../src/ledger/object/grants";
import { withLedgerDb } from "./ledger-db";

// src/ledger/object/grants.ts on its own: credits once per grant id, reversals set to a total; credits = Σ grants − Σ reversals.

describe("ledger grants and reversals", () => {
  it("a grant adds credits once per id and refuses what is not a positive whole amount or a usable id", () =>
    withLedgerDb((db) => {
      expect(grant(db, { grantId: "payment:p1", amountNano: 5_000_000_001, source: "console-payment" })).toEqual({
        applied: true,
        totals: { creditsNano: 5_000_000_001, usageNano: 0, heldNano: 0, granted: true },
      });
      expect(grant(db, { grantId: "payment:p1", amountNano: 5_000_000_001, source: "console-payment" }).applied).toBe(false);
      expect(() => grant(db, { grantId: "x", amountNano: 1.5, source: "admin" })).toThrow(RangeError);
      expect(() => grant(db, { grantId: "x", amountNano: 0, source: "admin" })).toThrow(RangeError);
      expect(() => grant(db, { grantId: "", amountNano: 1, source: "admin" })).toThrow(RangeError);
      expect(() => grant(db, { grantId: "x".repeat(201), amountNano: 1, source: "admin" })).toThrow(RangeError);
      expect(findGrant(db.sql, "payment:p1")).toEqual({ grantId: "payment:p1", amountNano: 5_000_000_001, source: "console-payment", createdAt: db.clock.now });
      expect(findGrant(db.sql, "payment:none")).toBeNull();
      expect(grantsSummary(db.sql)).toEqual({ count: 1, totalNano: 5_000_000_001, reversals: 0, reversedNano: 0 });
    }));

  it("a reversal is set to a total, raised or lowered, at most the grant; an older reading changes nothing", () =>
    withLedgerDb((db) => {
      grant(db, { grantId: "payment:p1", amountNano: 1_000, source: "console-payment" });
      const r1 = reverse(db, { grantId: "payment:p1", amountNano: 300, observedAt: 10, source: "refund" });
      expect(r1).toMatchObject({ changeNano: 300, reversedNano: 300, stale: false });
      expect(r1.totals.creditsNano).toBe(700);
      expect(reverse(db, { grantId: "payment:p1", amountNano: 5_000, observedAt: 20, source: "dispute" })).toMatchObject({
        changeNano: 700,
        reversedNano: 1_000,
      });
      expect(reverse(db, { grantId: "payment:p1", amountNano: 100, observedAt: 15, source: "refund" })).toMatchObject({
        changeNano: 0,
        reversedNano: 1_000,
        stale: true,
      });
      const r4 = reverse(db, { grantId: "payment:p1", amountNano: 100, observedAt: 30, source: "dispute-won" });
      expect(r4).toMatchObject({ changeNano: -900, reversedNano: 100, stale: false });
      expect(r4.totals.creditsNano).toBe(900);
      expect(grantsSummary(db.sql)).toEqual({ count: 1, totalNano: 1_000, reversals: 1, reversedNano: 100 });
      expect(() => reverse(db, { grantId: "payment:none", amountNano: 1, observedAt: 40, source: "x" })).toThrow(/no grant/);
      expect(() => reverse(db, { grantId: "payment:p1", amountNano: -1, observedAt: 40, source: "x" })).toThrow(RangeError);
      expect(() => reverse(db, { grantId: "payment:p1", amountNano: 1, observedAt: Number.NaN, source: "x" })).toThrow(RangeError);
    }));
});
