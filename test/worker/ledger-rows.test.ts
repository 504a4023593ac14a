import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { syntheticRecord } from "./synthetic-record";
import { ledgerTimings } from "../../src/ledger/ledger-config";
import type { LedgerDb } from "../../src/ledger/object/ledger-db";
import { RecordsOutbox } from "../../src/ledger/records-outbox";
import { settleBatch } from "../../src/ledger/object/settles";

// What the ledger's SQLite writes per settled request, end to end on its side: the settle (its debit, the
// record, usage), the alarm's batching and sending, the store's acknowledgement. Durable Object SQL storage
// bills rows written ($1 per million); docs/scale.md, "The ledger's side", quotes these figures.

/**
 * SQLite rows written per record for `n` requests of one key settled `per` at a time, then batched (at most
 * `batch` records an alarm), sent and acknowledged until nothing is pending.
 */
async function ledgerRowsPerRecord(n: number, per: number, batch: number): Promise<number> {
  const stub = env.LEDGER.get(env.LEDGER.idFromName(`rows-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => {
    const cursors: Array<{ rowsWritten: number }> = [];
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
    const now = Date.UTC(2026, 5, 10, 12);
    const outbox = new RecordsOutbox(sql);
    const db = {
      sql,
      transaction: (f: () => void) => state.storage.transactionSync(f),
      now: () => now,
      timings: ledgerTimings(env),
      outbox,
      scheduleAlarm: () => {},
    } as unknown as LedgerDb;
    const records = Array.from({ length: n }, (_, i) => syntheticRecord("rows-account", now + i, i, { keyHash: "k".repeat(64) }));
    for (let i = 0; i < n; i += per)
      settleBatch(
        db,
        records.slice(i, i + per).map((r) => ({ genId: r.id, keyHash: r.keyHash, costNano: r.costNano, record: r })),
      );
    for (let guard = 0; guard < 1000 && outbox.size() > 0; guard++) {
      outbox.assign(batch);
      const due = outbox.due(0);
      outbox.markSent(
        due.map((b) => b.batch),
        now,
      );
      for (const b of due) outbox.stored(b.batch);
    }
    expect(outbox.size()).toBe(0);
    return cursors.reduce((sum, c) => sum + c.rowsWritten, 0) / n;
  });
}

describe("the ledger's SQLite rows written per settled request (settle, batch, send, acknowledgement)", () => {
  it("is the debit and the usage rows, plus a few rows a batch: the record rides in its debit", async () => {
    const figures = {
      oneByOne: await ledgerRowsPerRecord(100, 1, 100),
      tenAtATime: await ledgerRowsPerRecord(100, 10, 100),
      smallBatches: await ledgerRowsPerRecord(100, 10, 10),
    };
    console.log(`ledger rows written per settled request: ${JSON.stringify(figures)}`);
    // Measured 4.06, 2.26 and 2.71: the debit (its row and gen_id index entry), the account's and the key's
    // usage once per settle call, and ≈ 6 rows a batch. Before records rode in their debits: 8.06, 5.36, 5.81
    // (the outbox's own row and index entry written and deleted, its counter, a row a batch).
    expect(figures.oneByOne).toBeLessThan(4.2);
    expect(figures.tenAtATime).toBeLessThan(2.4);
    expect(figures.smallBatches).toBeLessThan(2.9);
  });
});
