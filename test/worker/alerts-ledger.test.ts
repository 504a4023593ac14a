import { describe, it, expect } from "vitest";
import { env, runInDurableObject, createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import worker from "../../src/index";
import type { SettleRequest } from "../../src/ledger/contract";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import type { AlertMessage } from "../../src/alerts/events";
import { settleBatch } from "../../src/ledger/object/settles";
import { alertRules, alertsFired, setAlertThresholds } from "../../src/ledger/object/alerts";
import { ledgerFor } from "../../src/ledger/ledger";
import { fund, genRecord, withLedgerDb, type TestLedgerDb } from "./ledger-db";
import { ledgerRecord } from "./synthetic-record";
import { ledgerTimings } from "../../src/ledger/ledger-config";
import type { LedgerDb } from "../../src/ledger/object/ledger-db";
import { RecordsOutbox } from "../../src/ledger/records-outbox";

// Budget alerts in the ledger (src/ledger/object/alerts.ts): crossing detected from the ledger's own settled
// usage, in the settle's transaction, each threshold once per window, also when settles arrive at once.

const DAY = 86_400_000;
const limit = { nano: 1_000, reset: "daily" as const };
const item = (genId: string, costNano: number, more: Partial<SettleRequest> = {}): SettleRequest => ({
  genId,
  keyHash: "k",
  costNano,
  record: genRecord(genId, costNano),
  keyLimit: limit,
  ...more,
});
const fired = (db: TestLedgerDb) =>
  alertsFired(db.sql, 100)
    .reverse()
    .map(({ event: e }) =>
      e.type === "key.budget_threshold"
        ? `${e.data.key_hash} ${e.data.threshold_percent}% ${e.data.window_start}`
        : e.type === "account.balance_below"
          ? `balance < ${e.data.threshold_usd}`
          : e.type,
    );
const rules = (db: TestLedgerDb, keyPercents: Record<string, number[]>, balanceBelowNano: number[] = []) => {
  for (const [key, percents] of Object.entries(keyPercents)) setAlertThresholds(db.sql, key, percents, db.now());
  setAlertThresholds(db.sql, null, balanceBelowNano, db.now());
};

describe("budget alerts in the ledger", () => {
  it("a key crossing 50, 80 and 100 % of its daily limit fires each once, retries fire nothing, the next day's window fires again", () =>
    withLedgerDb((db) => {
      fund(db, 1_000_000);
      rules(db, { k: [50, 80, 100], gone: [10] });
      setAlertThresholds(db.sql, "gone", [], db.now()); // none: removed
      expect(alertRules(db.sql)).toEqual({ balanceBelowNano: [], keyPercents: { k: [50, 80, 100] } });
      expect(settleBatch(db, [item("a", 499)])).toBe(1);
      expect(fired(db)).toEqual([]); // 49.9 %: below 50
      const alarmsBefore = db.alarms.length;
      expect(settleBatch(db, [item("b", 1)])).toBe(1); // exactly 50 %
      expect(fired(db)).toEqual(["k 50% 2026-06-10"]);
      expect(db.alarms.slice(alarmsBefore)).toContain(0); // the alarm sends it at once, after the commit
      expect(settleBatch(db, [item("b", 1), item("a", 499)])).toBe(0); // a retried batch: nothing twice
      expect(settleBatch(db, [item("c", 350), item("d", 200)])).toBe(2); // 105 %: 80 and 100 in one batch
      expect(settleBatch(db, [item("e", 100)])).toBe(1); // still past them: not again in this window
      expect(fired(db)).toEqual(["k 50% 2026-06-10", "k 80% 2026-06-10", "k 100% 2026-06-10"]);
      // A key's events carry its figures.
      expect(alertsFired(db.sql, 1)[0]!.event).toMatchObject({
        type: "key.budget_threshold",
        data: { threshold_percent: 100, limit_usd: 0.000001, usage_usd: 0.00000105, limit_reset: "daily", window_start: "2026-06-10" },
      });
      db.clock.now += DAY;
      expect(settleBatch(db, [item("f", 600)])).toBe(1);
      expect(fired(db).slice(3)).toEqual(["k 50% 2026-06-11"]);
      // Another key, without thresholds or without a limit, fires nothing; free requests fire nothing.
      expect(settleBatch(db, [item("g", 900, { keyHash: "other" }), item("h", 900, { keyHash: "k", keyLimit: undefined }), item("i", 0)])).toBe(3);
      expect(fired(db)).toHaveLength(4);
    }));

  it("a key whose limit counts BYOK usage (include_byok_in_limit) crosses its thresholds on what the carrier charged its own key; another key on its fees alone", () =>
    withLedgerDb((db) => {
      fund(db, 1_000_000);
      rules(db, { k: [50, 100], plain: [50] });
      // BYOK requests: the carrier charged 400 each, the fee debited 20 (5 %); the first's fee waived (0).
      const byok = (genId: string, keyHash: string, fee: number, includeByok?: true) =>
        item(genId, fee, {
          keyHash,
          byok: true,
          record: { ...genRecord(genId, fee, keyHash), byokUpstreamNano: 400 },
          keyLimit: { ...limit, ...(includeByok ? { includeByok } : {}) },
        });
      expect(settleBatch(db, [byok("a", "k", 0, true)])).toBe(1); // 400 of 1,000: below 50 %
      expect(fired(db)).toEqual([]);
      expect(settleBatch(db, [byok("b", "k", 20, true)])).toBe(1); // 400 + 400 + 20 = 82 %
      expect(fired(db)).toEqual(["k 50% 2026-06-10"]);
      expect(alertsFired(db.sql, 1)[0]!.event).toMatchObject({ data: { threshold_percent: 50, usage_usd: 0.00000082 } });
      expect(settleBatch(db, [byok("c", "k", 20, true)])).toBe(1); // 1,240: past 100 %
      expect(fired(db)).toEqual(["k 50% 2026-06-10", "k 100% 2026-06-10"]);
      // Without the flag only the fees count: 3 × 20 of 1,000 fires nothing.
      expect(settleBatch(db, [byok("d", "plain", 20), byok("e", "plain", 20), byok("f", "plain", 20)])).toBe(3);
      expect(fired(db)).toHaveLength(2);
    }));

  it("the balance falling below an amount fires once; credits taking it back up re-arm it", () =>
    withLedgerDb((db) => {
      fund(db, 10_000);
      rules(db, {}, [5_000, 2_000]);
      settleBatch(db, [item("a", 4_000)]); // 6,000 left
      expect(fired(db)).toEqual([]);
      settleBatch(db, [item("b", 1_001)]); // 4,999: below 5,000
      settleBatch(db, [item("c", 1)]);
      expect(fired(db)).toEqual(["balance < 0.000005"]);
      settleBatch(db, [item("d", 3_000)]); // 1,998: below 2,000
      expect(fired(db)).toEqual(["balance < 0.000005", "balance < 0.000002"]);
      fund(db, 10_000); // a top-up: 11,998
      settleBatch(db, [item("e", 7_000)]); // 4,998: below 5,000 again
      expect(fired(db)).toEqual(["balance < 0.000005", "balance < 0.000002", "balance < 0.000005"]);
      expect(alertsFired(db.sql, 1)[0]!.event).toMatchObject({ type: "account.balance_below", data: { threshold_usd: 0.000005, balance_usd: 0.000004998 } });
    }));

  it("two isolates settling at once through the object: each threshold fires once, and the alarm sends each once", async () => {
    const accountId = `alerts-concurrent-${crypto.randomUUID()}`;
    const ledger = ledgerFor(env, accountId);
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    // The object's alerts queue, played by the test: what its alarm sends.
    const sent: AlertMessage[] = [];
    const queue = {
      sendBatch: async (msgs: Iterable<MessageSendRequest<AlertMessage>>) => void sent.push(...[...msgs].map((m) => m.body)),
    } as unknown as Queue<AlertMessage>;
    await runInDurableObject(stub, (instance: LedgerObject) => Object.defineProperty(instance, "env", { value: { ...instance["env"], ALERTS_QUEUE: queue } }));
    await ledger.grant({ grantId: "g", amountNano: 100_000, source: "test" });
    await ledger.setAlertThresholds("k", [100, 50, 80, 50]);
    await ledger.setAlertThresholds(null, [99_000]);
    expect(await ledger.alertRules()).toEqual({ keyPercents: { k: [50, 80, 100] }, balanceBelowNano: [99_000] });
    const settle = (isolate: string, n: number): SettleRequest => {
      const genId = `gen-${isolate}-${n}-${accountId}`;
      return { genId, keyHash: "k", costNano: 30, record: ledgerRecord(genId, { accountId, costNano: 30 }), keyLimit: { nano: 2_000, reset: "monthly" } };
    };
    // Two isolates, 40 batches of two settles each, all in flight together, some sent twice (a retry): 2,400 of a 2,000 limit.
    const calls = Array.from({ length: 40 }, (_, i) => {
      const isolate = i % 2 === 0 ? "a" : "b";
      const batch = [settle(isolate, 2 * i), settle(isolate, 2 * i + 1)];
      return i % 5 === 0 ? [ledger.settleBatch(batch, []), ledger.settleBatch(batch, [])] : [ledger.settleBatch(batch, [])];
    }).flat();
    expect((await Promise.all(calls)).reduce((a, b) => a + b, 0)).toBe(80);
    expect((await ledger.totals()).usageNano).toBe(2_400);
    const list = await ledger.alertsFired(100);
    expect(list.map((f) => (f.event.type === "key.budget_threshold" ? f.event.data.threshold_percent : f.event.type)).sort()).toEqual([
      100,
      50,
      80,
      "account.balance_below",
    ]);
    expect(list.every((f) => f.event.account_id === accountId)).toBe(true);
    // The object's alarm, due at once after the settles that fired them, hands them to the alerts queue once.
    const deadline = Date.now() + 10_000;
    while (!(await ledger.alertsFired(100)).every((f) => f.sentAt !== null) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await runInDurableObject(stub, (instance: LedgerObject) => instance.alarm()); // another alarm sends nothing more
    expect(sent.map((m) => m.kind)).toEqual(["event", "event", "event", "event"]);
    expect(new Set(sent.map((m) => m.event.id)).size).toBe(4);
    expect((await ledger.alertsFired(100)).every((f) => f.sentAt !== null)).toBe(true);
  });

  it("an alert the queue refused stays and goes with a later alarm", async () => {
    const accountId = `alerts-refused-${crypto.randomUUID()}`;
    const ledger = ledgerFor(env, accountId);
    const stub = env.LEDGER.get(env.LEDGER.idFromName(accountId));
    let refuse = true;
    let tries = 0;
    const sent: AlertMessage[] = [];
    const queue = {
      sendBatch: async (msgs: Iterable<MessageSendRequest<AlertMessage>>) => {
        tries++;
        if (refuse) throw new Error("queue unavailable");
        sent.push(...[...msgs].map((m) => m.body));
      },
    } as unknown as Queue<AlertMessage>;
    await runInDurableObject(stub, (instance: LedgerObject) => Object.defineProperty(instance, "env", { value: { ...instance["env"], ALERTS_QUEUE: queue } }));
    await ledger.grant({ grantId: "g", amountNano: 1_000, source: "test" });
    await ledger.setAlertThresholds(null, [500]);
    await ledger.settleBatch(
      [{ genId: `gen-r-${accountId}`, keyHash: "k", costNano: 600, record: ledgerRecord(`gen-r-${accountId}`, { accountId, costNano: 600 }) }],
      [],
    );
    const deadline = Date.now() + 10_000;
    while (tries === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await runInDurableObject(stub, async (instance: LedgerObject, state) => {
      expect(sent).toEqual([]);
      expect(instance.alertsFired(10)[0]!.sentAt).toBeNull();
      expect(await state.storage.getAlarm()).not.toBeNull(); // it tries again
      refuse = false;
      await instance.alarm();
    });
    expect(sent.map((m) => m.event.type)).toEqual(["account.balance_below"]);
  });
});

describe("budget alerts through the settle queue", () => {
  it("a settle the queue carries keeps its key's limit, so it fires the key's alert as a direct settle does", async () => {
    const accountId = `alerts-queued-${crypto.randomUUID()}`;
    const ledger = ledgerFor(env, accountId);
    await ledger.grant({ grantId: "g", amountNano: 10_000, source: "test" });
    await ledger.setAlertThresholds("k", [50]);
    const genId = `gen-q-${accountId}`;
    const body = {
      v: 1 as const,
      accountId,
      items: [
        { genId, keyHash: "k", costNano: 600, record: ledgerRecord(genId, { accountId, costNano: 600 }), keyLimit: { nano: 1_000, reset: "weekly" as const } },
      ],
      slices: [],
    };
    const batch = createMessageBatch("switchyard-settles", [{ id: "s1", timestamp: new Date(), attempts: 1, body }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["s1"]);
    const fired = await ledger.alertsFired(10);
    expect(fired.map((f) => f.event)).toEqual([
      expect.objectContaining({ type: "key.budget_threshold", data: expect.objectContaining({ threshold_percent: 50, limit_reset: "weekly" }) }),
    ]);
  });
});

describe("what alerts cost the ledger", () => {
  /** Rows written and read by settling `n` requests one by one (each 10 of a 1,000 limit), with or without thresholds. */
  async function settleRows(n: number, withRules: boolean) {
    const stub = env.LEDGER.get(env.LEDGER.idFromName(`alert-rows-${crypto.randomUUID()}`));
    return runInDurableObject(stub, (_instance, state) => {
      const cursors: Array<{ rowsWritten: number; rowsRead: number }> = [];
      const sql = new Proxy(state.storage.sql, {
        get(target, prop) {
          if (prop === "exec")
            return (...args: Parameters<SqlStorage["exec"]>) => {
              const cursor = target.exec(...args);
              cursors.push(cursor);
              return cursor;
            };
          const value = Reflect.get(target, prop, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const db = {
        sql,
        transaction: (f: () => void) => state.storage.transactionSync(f),
        now: () => Date.UTC(2026, 5, 10, 12),
        timings: ledgerTimings(env),
        outbox: new RecordsOutbox(sql),
        scheduleAlarm: () => {},
      } as unknown as LedgerDb;
      fund(db, 1_000_000);
      if (withRules) rules(db as TestLedgerDb, { k: [50, 80, 100] }, [1]);
      cursors.length = 0;
      for (let i = 0; i < n; i++) settleBatch(db, [item(`g${i}`, 10)]);
      for (const c of cursors) [...(c as unknown as Iterable<unknown>)]; // run each to its end: its counts are final then
      return {
        written: cursors.reduce((a, c) => a + c.rowsWritten, 0),
        read: cursors.reduce((a, c) => a + c.rowsRead, 0),
        fired: alertsFired(state.storage.sql, 10).length,
      };
    });
  }

  it("a settle that fires nothing writes no row more; each alert fired writes its row and index entries", async () => {
    const without = await settleRows(40, false); // 400 of 1,000: below 50 %
    const rulesNoFire = await settleRows(40, true);
    expect(rulesNoFire.fired).toBe(0);
    expect(rulesNoFire.written).toBe(without.written);
    const firing = await settleRows(100, true); // to 1,000: 50, 80 and 100 % fire
    const base = await settleRows(100, false);
    expect(firing.fired).toBe(3);
    // Measured: 4 rows written per alert (its row, its primary key, its (subject, threshold, window) and fired_at
    // index entries; its sent time is one more, at the alarm), and 3 rows read more per settle (the thresholds).
    expect((firing.written - base.written) / 3).toBe(4);
    expect((rulesNoFire.read - without.read) / 40).toBe(3);
  });
});
