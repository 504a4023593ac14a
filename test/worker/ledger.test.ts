import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { admin, chat, newAccount, recorded, settled, storedRecords, user } from "./helpers";
import { generationIdTime, newGenerationId } from "../../src/generations/generation-id";
import { findArchived } from "../../src/generations/archive-read";
import type { SettleRequest } from "../../src/ledger/contract";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import type { NewGeneration } from "../../src/db/schema";
import { ledgerRecord } from "./synthetic-record";

const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const record = (id: string, accountId: string, costNano: number): NewGeneration =>
  // As the router makes them: the id carries the request's time.
  ledgerRecord(id, { accountId, model: LLAMA, createdAt: generationIdTime(id) ?? Date.now(), costNano });

/** Settles one request through the batch entry point; true when it was applied. */
const settleOne = (ledger: LedgerObject, item: SettleRequest) => ledger.settleBatch([item], []) === 1;

describe("ledger", () => {
  it("100 parallel requests on one account end at the exact balance", async () => {
    const a = await newAccount(10);
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => chat(a.key, { model: LLAMA, ...user(`req ${i} [sim tokens=${1 + (i % 9)}]`) })));
    const costs = await Promise.all(
      responses.map(async (r) => (r.status === 200 ? Math.round(((await r.json()) as { usage: { cost: number } }).usage.cost * 1e9) : 0)),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const t = await settled(a.accountId);
    const sum = costs.reduce((x, y) => x + y, 0);
    expect(Math.round(t.total_usage * 1e9)).toBe(sum);
    expect(Math.round(t.balance * 1e9)).toBe(10e9 - sum);
  });

  it("settle is idempotent per generation id; admit holds only what can be paid and refuses at zero balance", async () => {
    const id = env.LEDGER.idFromName("ledger-unit-" + Math.random());
    const stub = env.LEDGER.get(id);
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 1000, source: "test" });
      const admit = (genId: string, holdNano: number, minHoldNano?: number, paid = true) =>
        ledger.admit({
          genId,
          keyHash: "k",
          limitNano: null,
          holdNano,
          ...(minHoldNano === undefined ? {} : { minHoldNano }),
          paid,
          abandoned: record(genId, "x", 0),
        });
      expect(admit("g1", 600)).toEqual({ ok: true, holdNano: 600 });
      expect(ledger.totals().heldNano).toBe(600);
      // 400 left: a 600 hold with nothing to lower is refused, saying what could be paid…
      expect(admit("g2", 600)).toEqual({ ok: false, reason: "balance", availableNano: 400, heldNano: 600 });
      // …one that may go as low as 50 (its cap lowered) gets the 400.
      expect(admit("g2", 600, 50)).toEqual({ ok: true, holdNano: 400 });
      // Available is now 0: the next paid request is refused (the balance is all held by requests in flight), a free one is not.
      expect(admit("g3", 1, 1)).toEqual({ ok: false, reason: "balance", availableNano: 0, heldNano: 1000 });
      expect(admit("g4", 0, undefined, false)).toEqual({ ok: true, holdNano: 0 });
      expect(settleOne(ledger, { genId: "g1", keyHash: "k", costNano: 500, record: record("g1", "x", 500) })).toBe(true);
      expect(settleOne(ledger, { genId: "g1", keyHash: "k", costNano: 500, record: record("g1", "x", 500) })).toBe(false);
      expect(settleOne(ledger, { genId: "g2", keyHash: "k", costNano: 400, record: record("g2", "x", 400) })).toBe(true);
      // Nothing was admitted that the balance could not pay: 1000 - 500 - 400 = 100.
      expect(ledger.totals()).toMatchObject({ creditsNano: 1000, usageNano: 900, heldNano: 0 });
      expect(ledger.keyUsage("k").usageNano).toBe(900);
      expect(ledger.pendingGeneration("g2")?.costNano).toBe(400);
    });
  });

  it("a key's remaining limit bounds the hold as the balance does, and a refusal names the key", async () => {
    const stub = env.LEDGER.get(env.LEDGER.idFromName("ledger-key-room-" + Math.random()));
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 10_000, source: "test" });
      const ask = (genId: string, holdNano: number, minHoldNano: number) =>
        ledger.admit({ genId, keyHash: "k", limitNano: 1000, holdNano, minHoldNano, paid: true, abandoned: record(genId, "x", 0) });
      expect(ask("a", 5000, 5000)).toEqual({ ok: false, reason: "key_limit", availableNano: 1000 });
      expect(ask("b", 5000, 100)).toEqual({ ok: true, holdNano: 1000 });
      expect(ask("c", 5000, 100)).toEqual({ ok: false, reason: "key_limit", availableNano: 0 });
    });
  });

  it("a key's limit counts what the asking isolate has of it that the ledger cannot see yet", async () => {
    const stub = env.LEDGER.get(env.LEDGER.idFromName("ledger-unseen-" + Math.random()));
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 10_000, source: "test" });
      const ask = (genId: string, unseenNano: number) =>
        ledger.admit({ genId, keyHash: "k", limitNano: 1000, holdNano: 100, paid: true, abandoned: record(genId, "x", 0), unseenNano });
      expect(ask("u1", 900)).toEqual({ ok: true, holdNano: 100 }); // 0 used + 0 held + 900 unseen + 100 ≤ 1000
      expect(ask("u2", 850)).toEqual({ ok: false, reason: "key_limit", availableNano: 50 }); // 100 held + 850 unseen: 50 left, 100 asked
      expect(ask("u3", 900)).toEqual({ ok: false, reason: "key_limit", availableNano: 0 }); // 100 held + 900 unseen: the limit is reached
    });
  });

  it("the alarm sends the outbox to the records store and releases expired holds, recording them as abandoned; a late settle replaces that record", async () => {
    const { accountId } = await newAccount();
    const stale = newGenerationId(Date.now() - 3600_000);
    const done = newGenerationId(Date.now());
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    let now = Date.now() - 3600_000;
    await runInDurableObject(stub, async (instance, state) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 1000, source: "test" });
      ledger.clock = () => now;
      ledger.admit({ genId: stale, keyHash: "k", limitNano: null, holdNano: 300, paid: true, abandoned: { ...record(stale, accountId, 0), status: 500 } });
      now += 3600_000; // an hour without a renewal: its request died
      settleOne(ledger, { genId: "done", keyHash: "k", costNano: 100, record: record(done, accountId, 100) });
      // The settle pulled the alarm forward from the hold's 30-minute expiry to a flush within a second.
      expect((await state.storage.getAlarm())! - Date.now()).toBeLessThanOrEqual(1000);
      await ledger.alarm();
      expect(ledger.totals()).toMatchObject({ usageNano: 100, heldNano: 0 });
    });
    // The records queue's consumer stores the batch and acknowledges it: the outbox empties.
    const stored = await storedRecords(accountId, 2);
    expect(stored.map((g) => [g.id, g.costNano, g.status]).sort()).toEqual(
      [
        [done, 100, 200],
        [stale, 0, 500],
      ].sort(),
    );
    // The request was alive after all: its settle still debits once and replaces the stored record.
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      expect(settleOne(ledger, { genId: stale, keyHash: "k", costNano: 250, record: record(stale, accountId, 250) })).toBe(true);
      now += 1000; // the flush delay: its record is due
      await ledger.alarm();
      expect(ledger.totals().usageNano).toBe(350);
    });
    await recorded(accountId, 2);
    const after = await storedRecords(accountId, 2);
    expect(after.map((g) => [g.id, g.costNano, g.status]).sort()).toEqual(
      [
        [done, 100, 200],
        [stale, 250, 200],
      ].sort(),
    );
    expect(await findArchived(env.DB, env.ARCHIVE, accountId, stale)).toMatchObject({ costNano: 250, status: 200 });
    // Counted once: two records, their cost the usage.
    expect(await admin(`/accounts/${accountId}/audit`)).toMatchObject({ records: 2, records_cost_nano: 350, records_pending: 0, usage_nano: 350 });
  });

  it("the alarm prunes settled ids older than 7 days once their records are stored, keeping newer ones", async () => {
    const { accountId } = await newAccount();
    const [oldId, newId] = [newGenerationId(Date.now() - 1), newGenerationId(Date.now())];
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    const ids = () => async (_instance: unknown, state: DurableObjectState) =>
      state.storage.sql
        .exec<{ gen_id: string }>("SELECT gen_id FROM debits ORDER BY gen_id")
        .toArray()
        .map((r) => r.gen_id);
    let now = Date.now();
    await runInDurableObject(stub, async (instance, state) => {
      const ledger = instance as LedgerObject;
      ledger.clock = () => now;
      ledger.settleBatch(
        [oldId, newId].map((id) => ({ genId: id, keyHash: "k", costNano: 1, record: record(id, accountId, 1) })),
        [],
      );
      state.storage.sql.exec("UPDATE debits SET settled_at = settled_at - ? WHERE gen_id = ?", 7 * 24 * 3600_000 + 1, oldId);
      await ledger.alarm(); // its record not stored yet (not even sent): the debit stays
      expect(await ids()(instance, state)).toEqual([oldId, newId].sort());
      now += 1000;
      await ledger.alarm(); // sent; the records queue's consumer stores them
    });
    await recorded(accountId, 2);
    await runInDurableObject(stub, async (instance, state) => {
      const ledger = instance as LedgerObject;
      now += 3600_000; // the next prune
      await ledger.alarm();
      expect(await ids()(instance, state)).toEqual([newId]);
      expect(ledger.totals().usageNano).toBe(2); // pruning forgets ids, never money
    });
  });

  it("a debit that lands between a request's admission and settle is never lost", async () => {
    const a = await newAccount(0.001);
    const streams = await Promise.all(Array.from({ length: 20 }, () => chat(a.key, { model: LLAMA, stream: true, ...user("x [sim tokens=3]") })));
    await Promise.all(streams.map((r) => r.text()));
    const t = await settled(a.accountId);
    expect(t.held).toBe(0);
    expect(t.total_usage).toBeGreaterThan(0);
  });
});

describe("ledger leases (isolate slices)", () => {
  it("grants at most half of what is available but at least the asking hold, and refuses a hold it cannot pay whole", async () => {
    const stub = env.LEDGER.get(env.LEDGER.idFromName("lease-unit-" + Math.random()));
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 1000, source: "test" });
      expect(ledger.lease({ leaseId: "l1", holdNano: 10, wantNano: 10_000 })).toEqual({ ok: true, grantNano: 500 });
      expect(ledger.lease({ leaseId: "l2", holdNano: 10, wantNano: 100 })).toEqual({ ok: true, grantNano: 100 });
      // 400 left: a hold larger than that is refused (its request asks `admit`, which may lower it), a smaller one granted.
      expect(ledger.lease({ leaseId: "l3", holdNano: 450, wantNano: 450 })).toEqual({ ok: false, reason: "balance", availableNano: 400 });
      expect(ledger.lease({ leaseId: "l4", holdNano: 400, wantNano: 400 })).toEqual({ ok: true, grantNano: 400 });
      expect(ledger.lease({ leaseId: "l5", holdNano: 1, wantNano: 1 })).toEqual({ ok: false, reason: "balance", availableNano: 0 });
      expect(ledger.totals().heldNano).toBe(1000);
    });
  });

  it("a leased request's cost leaves its lease; releasing returns the rest; each debit applies once", async () => {
    const accountId = "lease-settle-" + Math.random();
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 10_000, source: "test" });
      ledger.lease({ leaseId: "L", holdNano: 100, wantNano: 1000 });
      const items = [1, 2, 3].map((i) => ({ genId: `g${i}`, keyHash: "k", costNano: 50 * i, record: record(`g${i}`, accountId, 50 * i), leaseId: "L" }));
      expect(ledger.settleBatch(items, [])).toBe(3);
      expect(ledger.totals()).toMatchObject({ usageNano: 300, heldNano: 700 });
      expect(ledger.settleBatch(items, [])).toBe(0); // a retried batch applies nothing twice
      expect(ledger.settleBatch([], [{ leaseId: "L", admitted: 3, release: true }])).toBe(0);
      expect(ledger.totals()).toMatchObject({ creditsNano: 10_000, usageNano: 300, heldNano: 0 });
    });
  });

  it("a rest given back before the release leaves the slice once, however often it is reported; the release returns what is left", async () => {
    const accountId = "lease-return-" + Math.random();
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 10_000, source: "test" });
      ledger.lease({ leaseId: "L", holdNano: 100, wantNano: 1000 }); // 1000 held; two requests of 100 admitted from it
      expect(ledger.settleBatch([], [{ leaseId: "L", admitted: 2, returnedNano: 800 }])).toBe(0);
      expect(ledger.totals().heldNano).toBe(200);
      ledger.settleBatch([], [{ leaseId: "L", admitted: 2, returnedNano: 800 }]); // repeated: nothing more
      expect(ledger.totals().heldNano).toBe(200);
      const items = [1, 2].map((i) => ({ genId: `r${i}`, keyHash: "k", costNano: 60, record: record(`r${i}`, accountId, 60), leaseId: "L" }));
      ledger.settleBatch(items, [{ leaseId: "L", admitted: 2, returnedNano: 800, release: true }]);
      expect(ledger.totals()).toMatchObject({ creditsNano: 10_000, usageNano: 120, heldNano: 0 });
      expect(ledger.openHolds()).toEqual([]);
    });
  });

  it("a large mixed batch (more rows than one statement binds) debits each id once, per key and per lease", async () => {
    const accountId = "batch-mixed-" + Math.random();
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    await runInDurableObject(stub, async (instance, state) => {
      const ledger = instance as LedgerObject;
      ledger.grant({ grantId: "test-credits", amountNano: 1_000_000, source: "test" });
      ledger.lease({ leaseId: "L", holdNano: 100, wantNano: 100_000 });
      // 30 requests on their own holds (key k1), 60 on the lease (keys k1 and k2), one listed twice.
      for (let i = 0; i < 30; i++)
        ledger.admit({ genId: `own${i}`, keyHash: "k1", limitNano: null, holdNano: 1000, paid: true, abandoned: record(`own${i}`, accountId, 0) });
      const own = Array.from({ length: 30 }, (_, i) => ({ genId: `own${i}`, keyHash: "k1", costNano: 10 + i, record: record(`own${i}`, accountId, 10 + i) }));
      const leased = Array.from({ length: 60 }, (_, i) => ({
        genId: `l${i}`,
        keyHash: i % 2 ? "k2" : "k1",
        costNano: 100 + i,
        record: record(`l${i}`, accountId, 100 + i),
        leaseId: "L",
      }));
      const items = [...own, ...leased, leased[7]!];
      const ownSum = own.reduce((a, i) => a + i.costNano, 0);
      const leasedSum = leased.reduce((a, i) => a + i.costNano, 0);
      expect(ledger.settleBatch(items, [])).toBe(90);
      expect(ledger.totals()).toMatchObject({ usageNano: ownSum + leasedSum, heldNano: 100_000 - leasedSum });
      const perKey = (k: string) => state.storage.sql.exec<{ v: number }>("SELECT usage_nano AS v FROM key_usage WHERE key_hash = ?", k).one().v;
      const k2 = leased.filter((_, i) => i % 2).reduce((a, i) => a + i.costNano, 0);
      expect(perKey("k2")).toBe(k2);
      expect(perKey("k1")).toBe(ownSum + leasedSum - k2);
      expect(ledger.outboxSize()).toBe(90);
      expect(ledger.settleBatch(items, [{ leaseId: "L", admitted: 60, release: true }])).toBe(0); // the retry applies nothing; the release returns the lease's rest
      expect(ledger.totals()).toMatchObject({ usageNano: ownSum + leasedSum, heldNano: 0 });
    });
  });

  it("the alarm releases a slice its isolate stopped renewing, after the lease TTL, and keeps it in the slice audit", async () => {
    const stub = env.LEDGER.get(env.LEDGER.idFromName("lease-expiry-" + Math.random()));
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      let now = Date.now();
      ledger.clock = () => now;
      ledger.grant({ grantId: "test-credits", amountNano: 1000, source: "test" });
      ledger.lease({ leaseId: "dead", holdNano: 10, wantNano: 100 });
      ledger.lease({ leaseId: "renewed", holdNano: 10, wantNano: 100 });
      ledger.settleBatch([], [{ leaseId: "dead", admitted: 2 }]);
      now += 90_000;
      expect(ledger.renew({ slices: [{ leaseId: "renewed", admitted: 1 }], holds: [] })).toEqual({ gone: [] });
      now += 31_000; // "dead" last heard of 121 s ago, "renewed" 31 s ago
      await ledger.alarm();
      expect(ledger.openHolds().map((h) => h.id)).toEqual(["renewed"]);
      expect(ledger.outboxSize()).toBe(0); // a slice leaves no record
      expect(ledger.sliceAudit()).toMatchObject({
        unsettledAdmissions: 2,
        expiredSlices: 1,
        recent: [{ leaseId: "dead", admitted: 2, settled: 0, ended: "expired" }],
      });
      expect(ledger.renew({ slices: [{ leaseId: "dead", admitted: 2 }], holds: [] })).toEqual({ gone: ["dead"] });
    });
  });

  it("a free model's request gets a slice even at zero balance (of nothing), so its admission is counted", async () => {
    const stub = env.LEDGER.get(env.LEDGER.idFromName("lease-free-" + Math.random()));
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      expect(ledger.lease({ leaseId: "paid", holdNano: 10, wantNano: 640 })).toEqual({ ok: false, reason: "balance", availableNano: 0 });
      expect(ledger.lease({ leaseId: "free", holdNano: 0, wantNano: 0 })).toEqual({ ok: true, grantNano: 0 });
      expect(ledger.renew({ slices: [{ leaseId: "free", admitted: 4 }], holds: [] })).toEqual({ gone: [] });
      expect(ledger.openHolds()).toMatchObject([{ id: "free", kind: "slice", amountNano: 0, admitted: 4, settled: 0 }]);
    });
  });

  it("a released slice stays until every request it admitted has settled, whatever order they arrive in; the admin audit shows what never settled", async () => {
    const a = await newAccount(1);
    const stub = env.LEDGER.get(env.LEDGER.idFromName(a.accountId));
    const settleItem = (id: string) => ({ genId: id, keyHash: a.hash, costNano: 100, record: record(id, a.accountId, 100), leaseId: "L" });
    await runInDurableObject(stub, async (instance) => {
      const ledger = instance as LedgerObject;
      let now = Date.now();
      ledger.clock = () => now;
      ledger.lease({ leaseId: "L", holdNano: 1000, wantNano: 10_000 });
      ledger.lease({ leaseId: "D", holdNano: 1000, wantNano: 10_000 });
      ledger.settleBatch([settleItem(`gen-l1-${a.accountId}`)], [{ leaseId: "D", admitted: 2 }]);
      // The release (3 admitted) arrives before two of its settles: the slice and its money stay held.
      ledger.settleBatch([], [{ leaseId: "L", admitted: 3, release: true }]);
      expect(ledger.openHolds().find((h) => h.id === "L")).toMatchObject({ admitted: 3, settled: 1, released: true, amountNano: 9_900 });
      ledger.settleBatch([settleItem(`gen-l2-${a.accountId}`)], []);
      expect(ledger.openHolds().map((h) => h.id)).toEqual(["L", "D"]);
      ledger.settleBatch([settleItem(`gen-l3-${a.accountId}`)], []);
      expect(ledger.openHolds().map((h) => h.id)).toEqual(["D"]); // all three settled: released
      now += 3 * 60_000; // slice D's isolate died with two requests admitted
      await ledger.alarm();
    });
    const audit = await admin<{
      unsettled_admissions: number;
      expired_slices: number;
      ended_slices: Array<Record<string, unknown>>;
      held_nano: number;
      usage_nano: number;
    }>(`/accounts/${a.accountId}/audit`);
    expect(audit).toMatchObject({ unsettled_admissions: 2, expired_slices: 1, held_nano: 0, usage_nano: 300 });
    expect(audit.ended_slices).toEqual([expect.objectContaining({ lease_id: "D", admitted: 2, settled: 0, ended: "expired" })]);
  });

  it("requests admitted from an isolate slice settle exactly and the slice is released when idle", async () => {
    const a = await newAccount(1);
    const sequential: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await chat(a.key, { model: LLAMA, ...user(`one at a time ${i} [sim tokens=3]`) });
      sequential.push(Math.round(((await res.json()) as { usage: { cost: number } }).usage.cost * 1e9));
    }
    const t = await settled(a.accountId); // held returns to 0 only once the idle slice is released
    expect(Math.round(t.total_usage * 1e9)).toBe(sequential.reduce((x, y) => x + y, 0));
  });
});
