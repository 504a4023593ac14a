import { describe, it, expect } from "vitest";
import { keysUsage, keyUsage, openHolds, sliceAudit } from "../../src/ledger/object/reads";
import { available, heldNano, totals } from "../../src/ledger/object/balance";
import { withLedgerDb } from "./ledger-db";
import { NO_USAGE } from "../../src/keys/key-usage";

// src/ledger/object/reads.ts and balance.ts on their own: what the ledger answers without changing anything.

describe("ledger reads", () => {
  it("a key's usage per window: today, this week (from Monday), this month, ever", () =>
    withLedgerDb((db) => {
      // Wednesday 2026-06-10.
      const rows: Array<[string, number]> = [
        ["2026-05-31", 1],
        ["2026-06-01", 10],
        ["2026-06-08", 100],
        ["2026-06-10", 1_000],
      ];
      // BYOK usage beside it, in the same windows (3× the usage here, to tell them apart).
      for (const [day, nano] of rows) db.sql.exec("INSERT INTO key_usage (key_hash, day, usage_nano, byok_nano) VALUES ('k', ?, ?, ?)", day, nano, 3 * nano);
      expect(keyUsage(db.sql, "k", db.clock.now)).toEqual({
        usageNano: 1_111,
        dailyNano: 1_000,
        weeklyNano: 1_100,
        monthlyNano: 1_110,
        byokNano: 3_333,
        byokDailyNano: 3_000,
        byokWeeklyNano: 3_300,
        byokMonthlyNano: 3_330,
      });
      expect(keyUsage(db.sql, "other", db.clock.now)).toEqual(NO_USAGE);
    }));

  it("keysUsage answers many keys in one call, past SQLite's bound-parameter limit, zeros for keys without usage", () =>
    withLedgerDb((db) => {
      const keys = Array.from({ length: 150 }, (_, i) => `key${i}`);
      for (let i = 0; i < 150; i += 2) db.sql.exec("INSERT INTO key_usage (key_hash, day, usage_nano) VALUES (?, '2026-06-10', ?)", keys[i], i + 1);
      const out = keysUsage(db.sql, keys, db.clock.now);
      expect(Object.keys(out)).toHaveLength(150);
      expect(out.key148).toEqual({ ...NO_USAGE, usageNano: 149, dailyNano: 149, weeklyNano: 149, monthlyNano: 149 });
      expect(out.key149).toEqual(NO_USAGE);
    }));

  it("the balance: credits less usage less what holds and slices reserve; open holds oldest first", () =>
    withLedgerDb((db) => {
      db.sql.exec("UPDATE account SET credits_nano = 1000, usage_nano = 100, granted = 1 WHERE id = 1");
      db.sql.exec("INSERT INTO holds (gen_id, key_hash, amount_nano, created_at, renewed_at, record) VALUES ('h', 'k', 30, 2, 5, '{}')");
      db.sql.exec("INSERT INTO slices (lease_id, amount_nano, created_at, renewed_at, admitted, settled, released_at) VALUES ('s', 200, 1, 4, 3, 1, 6)");
      expect(heldNano(db.sql)).toBe(230);
      expect(available(db.sql)).toBe(670);
      expect(totals(db.sql)).toEqual({ creditsNano: 1_000, usageNano: 100, heldNano: 230, granted: true });
      expect(openHolds(db.sql)).toEqual([
        { id: "s", kind: "slice", amountNano: 200, createdAt: 1, renewedAt: 4, admitted: 3, settled: 1, released: true },
        { id: "h", kind: "request", amountNano: 30, createdAt: 2, renewedAt: 5, admitted: null, settled: null, released: false },
      ]);
      expect(openHolds(db.sql, 1).map((h) => h.id)).toEqual(["s"]);
    }));

  it("the slice audit sums admissions never seen settled and counts expired slices", () =>
    withLedgerDb((db) => {
      db.sql.exec(
        "INSERT INTO slice_audit (lease_id, admitted, settled, ended_at, ended) VALUES ('a', 5, 2, 10, 'expired'), ('b', 4, 4, 20, 'expired'), ('c', 3, 1, 30, 'released')",
      );
      expect(sliceAudit(db.sql)).toEqual({
        unsettledAdmissions: 5,
        expiredSlices: 2,
        recent: [
          { leaseId: "c", admitted: 3, settled: 1, endedAt: 30, ended: "released" },
          { leaseId: "b", admitted: 4, settled: 4, endedAt: 20, ended: "expired" },
          { leaseId: "a", admitted: 5, settled: 2, endedAt: 10, ended: "expired" },
        ],
      });
    }));
});
