import { describe, it, expect } from "vitest";
import type { RecordBatch } from "../../src/ledger/record-batch";
import { DEBIT_RECORDS_STEP, migrateLedger } from "../../src/ledger/ledger-sql";
import { LedgerAlarm } from "../../src/ledger/object/alarm";
import { genRecord, settleRecords, withLedgerDb } from "./ledger-db";

// A ledger of an earlier deployment (records in outbox rows of their own, debits without a sequence) upgrades
// in place: Durable Objects keep their SQLite. Every record it held is sent once, and its debits still dedupe.

function fakeQueue() {
  const sent: RecordBatch[] = [];
  const queue = {
    sendBatch: async (messages: Array<{ body: RecordBatch }>) => void sent.push(...messages.map((m) => m.body)),
    send: async (body: RecordBatch) => void sent.push(body),
  };
  return { sent, queue: queue as unknown as Queue<RecordBatch> };
}

describe("the ledger's upgrade to records riding in their debits", () => {
  it("an earlier layout's outbox rows (batched, sent, unbatched, abandoned) are each sent once after the upgrade; its debits still dedupe", () =>
    withLedgerDb(async (db) => {
      const { sql } = db;
      // The object migrated it fully: start again from nothing and stop before the step under test.
      const tables = sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'");
      for (const { name } of tables.toArray()) sql.exec(`DROP TABLE "${name}"`);
      migrateLedger(sql, DEBIT_RECORDS_STEP);
      expect(sql.exec("SELECT 1 FROM pragma_table_info('debits') WHERE name = 'seq'").toArray()).toEqual([]);
      const t = db.clock.now - 60_000;
      const old = ["o1", "o2", "o3", "o4", "o5"].map((id) => genRecord(id, 10));
      for (const r of old) sql.exec("INSERT INTO debits (gen_id, key_hash, cost_nano, settled_at) VALUES (?, 'k', 10, ?)", r.id, t);
      sql.exec("INSERT INTO debits (gen_id, key_hash, cost_nano, settled_at) VALUES ('stored-long-ago', 'k', 3, ?)", t);
      // o1, o2: a batch sent and not acknowledged; o3: a batch not sent; o4, o5 and an abandoned record: in no batch.
      old.forEach((r, i) => sql.exec("INSERT INTO outbox (seq, gen_id, record) VALUES (?, ?, ?)", i + 1, r.id, JSON.stringify(r)));
      sql.exec("INSERT INTO outbox (seq, gen_id, record, abandoned) VALUES (6, 'dead', ?, 1)", JSON.stringify(genRecord("dead", 0)));
      sql.exec("INSERT INTO abandoned_ids (gen_id, at, record) VALUES ('dead', ?, ?)", t, JSON.stringify(genRecord("dead", 0)));
      const account = old[0]!.accountId;
      sql.exec(
        "INSERT INTO record_batches (batch, first_seq, last_seq, sent_at) VALUES (?, 1, 2, ?), (?, 3, 3, NULL)",
        `${account}:1`,
        db.clock.now,
        `${account}:2`,
      );
      sql.exec("UPDATE outbox_state SET next_seq = 7, assigned_upto = 3, next_batch = 3");

      migrateLedger(sql);
      expect(db.outbox.size()).toBe(6);
      expect(db.outbox.pending("o4")).toMatchObject({ id: "o4" });
      // Its debits keep deduping: a retried settle applies nothing; a new one rides after every old row.
      expect(settleRecords(db, [old[0]!])).toBe(0);
      expect(settleRecords(db, [genRecord("n1", 20)])).toBe(1);
      const seqs = sql.exec<{ gen_id: string; seq: number }>("SELECT gen_id, seq FROM debits ORDER BY seq").toArray();
      expect(seqs.filter((r) => r.gen_id !== "n1").every((r) => r.seq <= 0)).toBe(true);
      expect(seqs.find((r) => r.gen_id === "n1")!.seq).toBeGreaterThan(6);

      const { sent, queue } = fakeQueue();
      db.clock.now += db.timings.flushDelayMs;
      await new LedgerAlarm(() => {}).fire(db, queue); // the unsent batch and the unbatched rows now
      expect(sent.flatMap((b) => b.items.map((i) => JSON.parse(i.record).id as string)).sort()).toEqual(["dead", "n1", "o3", "o4", "o5"]);
      for (const b of sent) db.outbox.stored(b.batch);
      db.clock.now += db.timings.recordsAckTimeoutMs;
      await new LedgerAlarm(() => {}).fire(db, queue); // the batch sent before the upgrade, at its ack timeout
      const ids = sent.flatMap((b) => b.items.map((i) => JSON.parse(i.record).id as string)).sort();
      expect(ids).toEqual(["dead", "n1", "o1", "o2", "o3", "o4", "o5"]);
      expect(sent.find((b) => b.items.some((i) => i.abandoned))!.items.find((i) => i.abandoned)).toMatchObject({ abandoned: true });
      for (const b of sent) db.outbox.stored(b.batch);
      expect(db.outbox.size()).toBe(0);
      expect(sql.exec("SELECT COUNT(*) AS n FROM outbox").one().n).toBe(0);
      expect(db.outbox.pending("o1")).toBeNull();
      // Nothing goes twice: a later alarm sends nothing.
      db.clock.now += db.timings.recordsAckTimeoutMs;
      await new LedgerAlarm(() => {}).fire(db, queue);
      expect(sent.flatMap((b) => b.items)).toHaveLength(7);
    }));
});
