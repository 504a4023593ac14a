import { describe, it, expect } from "vitest";
import { countFree, releaseFree } from "../../src/ledger/object/free-slots";
import { fund, withLedgerDb } from "./ledger-db";

// src/ledger/object/free-slots.ts on its own: the account's free-model rate limits, a sliding minute and the UTC day.

const limits = { perMinute: 2, perDay: 3, perDayBought: 5, boughtNano: 10_000 };
const T0 = Date.UTC(2026, 5, 10, 12);

describe("ledger free slots", () => {
  it("counts free requests in a sliding minute: the oldest leaving the minute frees the next slot", () =>
    withLedgerDb((db) => {
      expect(countFree(db.sql, limits, T0, "a")).toBeNull();
      expect(countFree(db.sql, limits, T0 + 10_000, "b")).toBeNull();
      expect(countFree(db.sql, limits, T0 + 20_000, "c")).toEqual({ window: "minute", limit: 2, resetAt: T0 + 60_000, retryAfterS: 40 });
      expect(countFree(db.sql, limits, T0 + 60_001, "c")).toBeNull();
    }));

  it("counts the UTC day, with a higher limit once the account's grants reach the bought threshold", () =>
    withLedgerDb((db) => {
      for (let i = 0; i < 3; i++) expect(countFree(db.sql, limits, T0 + i * 61_000, `d${i}`)).toBeNull();
      const midnight = Date.UTC(2026, 5, 11);
      expect(countFree(db.sql, limits, T0 + 200_000, "d3")).toEqual({
        window: "day",
        limit: 3,
        resetAt: midnight,
        retryAfterS: (midnight - T0 - 200_000) / 1000,
      });
      fund(db, 10_000);
      expect(countFree(db.sql, limits, T0 + 300_000, "d3")).toBeNull();
      // A new UTC day starts from zero.
      expect(countFree(db.sql, { ...limits, perDayBought: 4 }, midnight + 1, "n")).toBeNull();
      expect(db.sql.exec<{ day: string; count: number }>("SELECT day, count FROM free_days ORDER BY day").toArray()).toEqual([
        { day: "2026-06-10", count: 4 },
        { day: "2026-06-11", count: 1 },
      ]);
    }));

  it("a request a priced endpoint served gives its slot back: its minute row and its day's count", () =>
    withLedgerDb((db) => {
      expect(countFree(db.sql, limits, T0, "a")).toBeNull();
      expect(countFree(db.sql, limits, T0 + 1, "b")).toBeNull();
      releaseFree(db.sql, "a", T0);
      expect(countFree(db.sql, limits, T0 + 2, "c")).toBeNull();
      expect(
        db.sql
          .exec<{ gen_id: string }>("SELECT gen_id FROM free_minute ORDER BY at")
          .toArray()
          .map((r) => r.gen_id),
      ).toEqual(["b", "c"]);
      expect(db.sql.exec<{ count: number }>("SELECT count FROM free_days").one().count).toBe(2);
    }));
});
