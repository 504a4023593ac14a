import { describe, it, expect } from "vitest";
import type { AdmitRequest } from "../../src/ledger/contract";
import { admit, lease, renew } from "../../src/ledger/object/holds";
import { totals } from "../../src/ledger/object/balance";
import { fund, genRecord, withLedgerDb, type TestLedgerDb } from "./ledger-db";

// src/ledger/object/holds.ts on its own: admissions, leases and renewals over the ledger's tables.

const ask = (genId: string, holdNano: number, more: Partial<AdmitRequest> = {}): AdmitRequest => ({
  genId,
  keyHash: "k",
  limitNano: null,
  holdNano,
  paid: true,
  abandoned: genRecord(genId, 0),
  ...more,
});
const held = (db: TestLedgerDb, genId: string) =>
  db.sql.exec<{ amount_nano: number }>("SELECT amount_nano FROM holds WHERE gen_id = ?", genId).toArray()[0]?.amount_nano;

describe("ledger holds", () => {
  it("admit holds the worst case, lowers it to what is left down to the least hold, then refuses with the figures", () =>
    withLedgerDb((db) => {
      fund(db, 1_000);
      expect(admit(db, ask("a", 600))).toEqual({ ok: true, holdNano: 600 });
      expect(admit(db, ask("b", 600, { minHoldNano: 100 }))).toEqual({ ok: true, holdNano: 400 });
      expect(admit(db, ask("c", 600, { minHoldNano: 100 }))).toEqual({ ok: false, reason: "balance", availableNano: 0, heldNano: 1_000 });
      expect([held(db, "a"), held(db, "b"), held(db, "c")]).toEqual([600, 400, undefined]);
      expect(totals(db.sql)).toEqual({ creditsNano: 1_000, usageNano: 0, heldNano: 1_000, granted: true });
      // Each admission makes sure the alarm comes by the hold TTL (to expire the hold of a request that died).
      expect(db.alarms).toEqual([db.timings.holdTtlMs, db.timings.holdTtlMs]);
      // Its abandoned record waits in the hold row.
      const row = db.sql.exec<{ record: string }>("SELECT record FROM holds WHERE gen_id = 'a'").one();
      expect(JSON.parse(row.record)).toMatchObject({ id: "a", costNano: 0 });
    }));

  it("a key's limit counts its settled usage of the window, its holds and what the isolate has unseen", () =>
    withLedgerDb((db) => {
      fund(db, 10_000);
      db.sql.exec("INSERT INTO key_usage (key_hash, day, usage_nano) VALUES ('k', '2026-06-10', 300)");
      expect(admit(db, ask("a", 200, { limitNano: 1_000, unseenNano: 100 }))).toEqual({ ok: true, holdNano: 200 });
      // 300 used + 200 held + 100 unseen: 400 left, less than this hold and its least hold.
      expect(admit(db, ask("b", 500, { limitNano: 1_000, unseenNano: 100 }))).toEqual({ ok: false, reason: "key_limit", availableNano: 400 });
      expect(admit(db, ask("c", 500, { limitNano: 1_000, unseenNano: 500 }))).toEqual({ ok: false, reason: "key_limit", availableNano: 0 });
      // A daily limit sees only today's usage.
      db.clock.now = Date.UTC(2026, 5, 11, 0, 1);
      expect(admit(db, ask("d", 700, { limitNano: 1_000, limitReset: "daily" }))).toEqual({ ok: true, holdNano: 700 });
    }));

  it("a key counting BYOK usage: its limit counts usage and BYOK usage, and must cover a request's whole key hold (keyHoldNano), reserved apart from the balance's", () =>
    withLedgerDb((db) => {
      fund(db, 10_000);
      db.sql.exec("INSERT INTO key_usage (key_hash, day, usage_nano, byok_nano) VALUES ('k', '2026-06-10', 100, 500)");
      const counting = { limitNano: 1_000, includeByok: true };
      // 100 + 500 used: 400 left. A key hold of 401 does not fit (no lowering), though the balance would pay its fee hold.
      expect(admit(db, ask("a", 20, { ...counting, keyHoldNano: 401 }))).toEqual({ ok: false, reason: "key_limit", availableNano: 400 });
      expect(admit(db, ask("b", 20, { ...counting, keyHoldNano: 300 }))).toEqual({ ok: true, holdNano: 20 });
      const row = db.sql.exec<{ amount_nano: number; key_amount_nano: number }>("SELECT amount_nano, key_amount_nano FROM holds WHERE gen_id = 'b'").one();
      expect(row).toEqual({ amount_nano: 20, key_amount_nano: 300 });
      expect(totals(db.sql).heldNano).toBe(20);
      // The key's limit sees b's key hold: 100 left.
      expect(admit(db, ask("c", 20, { ...counting, keyHoldNano: 101 }))).toEqual({ ok: false, reason: "key_limit", availableNano: 100 });
      // Without include_byok_in_limit, BYOK usage does not count: 1000 − 100 − 300 held = 600 left.
      expect(admit(db, ask("d", 700, { limitNano: 1_000 }))).toEqual({ ok: false, reason: "key_limit", availableNano: 600 });
      expect(admit(db, ask("e", 600, { limitNano: 1_000 }))).toEqual({ ok: true, holdNano: 600 });
    }));

  it("admit applies the settles riding on it first: the admission sees the money they freed", () =>
    withLedgerDb((db) => {
      fund(db, 1_000);
      expect(admit(db, ask("a", 1_000))).toEqual({ ok: true, holdNano: 1_000 });
      const settle = { items: [{ genId: "a", keyHash: "k", costNano: 250, record: genRecord("a", 250) }], slices: [] };
      expect(admit(db, ask("b", 750, { settle }))).toEqual({ ok: true, holdNano: 750 });
      expect(totals(db.sql)).toEqual({ creditsNano: 1_000, usageNano: 250, heldNano: 750, granted: true });
    }));

  it("lease grants at least the hold and at most half of what is available, or refuses when the hold cannot be paid", () =>
    withLedgerDb((db) => {
      fund(db, 1_001);
      expect(lease(db, { leaseId: "s1", holdNano: 10, wantNano: 10_000 })).toEqual({ ok: true, grantNano: 501 });
      expect(lease(db, { leaseId: "s2", holdNano: 10, wantNano: 100 })).toEqual({ ok: true, grantNano: 100 });
      expect(lease(db, { leaseId: "s3", holdNano: 401, wantNano: 1_000 })).toEqual({ ok: false, reason: "balance", availableNano: 400 });
      // A free model's request gets a slice even of nothing.
      db.sql.exec("UPDATE account SET usage_nano = 400 WHERE id = 1");
      expect(lease(db, { leaseId: "s4", holdNano: 0, wantNano: 0 })).toEqual({ ok: true, grantNano: 0 });
      expect(totals(db.sql).heldNano).toBe(601);
      expect(db.alarms).toEqual([db.timings.leaseTtlMs, db.timings.leaseTtlMs, db.timings.leaseTtlMs]);
    }));

  it("renew keeps slices and holds alive, counts admissions, and names what is gone", () =>
    withLedgerDb((db) => {
      fund(db, 1_000);
      admit(db, ask("h", 10));
      lease(db, { leaseId: "s", holdNano: 10, wantNano: 100 });
      db.clock.now += 5_000;
      expect(
        renew(db, {
          slices: [
            { leaseId: "s", admitted: 3 },
            { leaseId: "dead", admitted: 1 },
          ],
          holds: ["h", "gone"],
        }),
      ).toEqual({ gone: ["dead", "gone"] });
      const slice = db.sql.exec<{ renewed_at: number; admitted: number }>("SELECT renewed_at, admitted FROM slices WHERE lease_id = 's'").one();
      expect(slice).toEqual({ renewed_at: db.clock.now, admitted: 3 });
      expect(db.sql.exec<{ renewed_at: number }>("SELECT renewed_at FROM holds WHERE gen_id = 'h'").one().renewed_at).toBe(db.clock.now);
      // Admissions only grow: a late report of fewer changes nothing.
      renew(db, { slices: [{ leaseId: "s", admitted: 2 }], holds: [] });
      expect(db.sql.exec<{ admitted: number }>("SELECT admitted FROM slices WHERE lease_id = 's'").one().admitted).toBe(3);
    }));
});
