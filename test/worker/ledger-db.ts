import { env, runInDurableObject } from "cloudflare:test";
import type { NewGeneration } from "../../src/db/schema";
import { ledgerRecord } from "./synthetic-record";
import { ledgerTimings } from "../../src/ledger/ledger-config";
import type { LedgerDb } from "../../src/ledger/object/ledger-db";
import { RecordsOutbox } from "../../src/ledger/records-outbox";
import { settleBatch } from "../../src/ledger/object/settles";

/** A LedgerDb over a fresh account's ledger storage: the test's own time, and the alarms the module asked for (ms from now), in order. */
export type TestLedgerDb = LedgerDb & { clock: { now: number }; alarms: number[]; state: DurableObjectState };

/**
 * Runs `fn` inside a fresh ledger Durable Object (its SQLite migrated by the object), on the module
 * functions directly: the object itself is not called, so each module is tested on its own.
 */
export function withLedgerDb<R>(fn: (db: TestLedgerDb) => R | Promise<R>): Promise<R> {
  const stub = env.LEDGER.get(env.LEDGER.idFromName(`ledger-module-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => {
    const clock = { now: Date.UTC(2026, 5, 10, 12) };
    const alarms: number[] = [];
    const db: TestLedgerDb = {
      sql: state.storage.sql,
      transaction: (f) => state.storage.transactionSync(f),
      now: () => clock.now,
      timings: ledgerTimings(env),
      outbox: new RecordsOutbox(state.storage.sql),
      scheduleAlarm: (inMs) => void alarms.push(inMs),
      clock,
      alarms,
      state,
    };
    return fn(db);
  });
}

/** A generation record as the router makes one (what the outbox carries). */
export function genRecord(id: string, costNano: number, keyHash = "k"): NewGeneration {
  return ledgerRecord(id, { keyHash, model: "meta-llama/llama-3.1-8b-instruct", createdAt: Date.UTC(2026, 5, 10, 12), costNano });
}

/** Credits for the account, straight into its tables (as grants.ts keeps them: credits = Σ grants). */
export function fund(db: LedgerDb, nano: number): void {
  db.sql.exec("INSERT INTO grants (grant_id, amount_nano, source, created_at) VALUES (?, ?, 'test', 0)", `fund-${nano}-${Math.random()}`, nano);
  db.sql.exec("UPDATE account SET credits_nano = credits_nano + ?, granted = 1 WHERE id = 1", nano);
}

/**
 * Settles these records (each its request's debit of its cost, its record riding in it) without asking for
 * the alarm: the test batches and sends them itself. Returns how many were new.
 */
export function settleRecords(db: LedgerDb, records: NewGeneration[]): number {
  const items = records.map((r) => ({ genId: r.id, keyHash: r.keyHash ?? "k", costNano: r.costNano ?? 0, record: r }));
  return settleBatch({ ...db, scheduleAlarm: () => {} }, items);
}
