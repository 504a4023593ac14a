import type { NewGeneration } from "../db/schema";
import type { SettleRequest } from "./contract";
import { RecordBatches } from "./record-batches";

export { MESSAGE_RECORD_BYTES } from "./record-batches";

/** Abandoned records are remembered this long, so a settle arriving later is known to replace one. */
const ABANDONED_KEPT_MS = 7 * 24 * 3600_000;
/** Generation ids one lookup binds (SQLite in Durable Objects binds at most 100 parameters a statement). */
const IDS = 90;

/**
 * The ledger's generation records waiting for the records store (src/generations/store-batches.ts writes
 * them to R2), in the ledger Durable Object's SQLite: one per settled request, or the "abandoned" record of
 * one that died. **A settled request's record rides in the row its settle writes anyway, its debit**, with
 * the account's next sequence number; an abandoned record (no debit) has a row of its own in `outbox`, in
 * the same sequence. The alarm sends them in batches (record-batches.ts: ranges of the sequence, stored
 * once however often sent); a record stays readable here by `/generation` until the store acknowledges its
 * batch: at every moment it is here or stored.
 *
 * SQLite rows written per settled request for its record: none besides its debit (its row and `gen_id`
 * index entry, written at the settle and deleted when pruned, as before records rode in it); per batch, a
 * handful (record-batches.ts). A debit is pruned once it is older than the dedupe window and its record is
 * stored.
 *
 * A settle that arrives after its request's hold expired replaces the abandoned record written then: here,
 * if that one is not in a batch yet; otherwise the new record carries the abandoned one (`replaced`) and
 * the store counts it in place of it (src/generations/store-batches.ts).
 */
export class RecordsOutbox extends RecordBatches {
  /** The next sequence number: above every row of both tables and every batch, so "above `assigned_upto`" is exactly "in no batch yet". */
  nextSeq(): number {
    return this.sql
      .exec<{ n: number }>(
        `SELECT max(assigned_upto, next_seq - 1, coalesce((SELECT max(seq) FROM debits), 0), coalesce((SELECT max(seq) FROM outbox), 0)) + 1 AS n FROM outbox_state`,
      )
      .one().n;
  }

  /**
   * The settles' debit rows (seq, gen_id, key_hash, cost_nano, settled_at, record, replaced), for one
   * INSERT OR IGNORE that writes only the new ones: each carries its record and, if its request's abandoned
   * record is in a batch already, that record, which the store takes out again.
   */
  debitRows(items: SettleRequest[], now: number): unknown[][] {
    const replaced = new Map<string, string>();
    const upto = this.assignedUpto();
    for (let i = 0; i < items.length; i += IDS) {
      const ids = items.slice(i, i + IDS).map((x) => x.genId);
      const rows = this.sql.exec<{ gen_id: string; record: string }>(
        `SELECT gen_id, record FROM abandoned_ids a WHERE gen_id IN (${ids.map(() => "?").join(", ")})
           AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.gen_id = a.gen_id AND o.abandoned = 1 AND o.seq > ?)`,
        ...ids,
        upto,
      );
      for (const r of rows) replaced.set(r.gen_id, r.record);
    }
    let seq = this.nextSeq();
    return items.map((x) => [seq++, x.genId, x.keyHash, x.costNano, now, JSON.stringify(x.record), replaced.get(x.genId) ?? null]);
  }

  /** After the debits of these new settles: their abandoned records are forgotten, and one in no batch yet leaves (it was never sent). */
  settled(genIds: string[]): void {
    if (genIds.length === 0) return;
    const upto = this.assignedUpto();
    for (let i = 0; i < genIds.length; i += IDS) {
      const ids = genIds.slice(i, i + IDS);
      const gone = this.sql.exec<{ gen_id: string }>(`DELETE FROM abandoned_ids WHERE gen_id IN (${ids.map(() => "?").join(", ")}) RETURNING gen_id`, ...ids);
      for (const { gen_id } of gone.toArray()) this.sql.exec("DELETE FROM outbox WHERE gen_id = ? AND abandoned = 1 AND seq > ?", gen_id, upto);
    }
  }

  /** The record a request leaves when its hold expires (it died without settling); a settle may replace it later. */
  addAbandoned(genId: string, recordJson: string, now: number): void {
    const known = this.sql.exec("SELECT 1 FROM outbox WHERE gen_id = ?1 UNION ALL SELECT 1 FROM debits WHERE gen_id = ?1", genId).toArray();
    if (known.length > 0) return;
    this.sql.exec("INSERT INTO outbox (seq, gen_id, record, abandoned) VALUES (?, ?, ?, 1)", this.nextSeq(), genId, recordJson);
    this.sql.exec("INSERT OR REPLACE INTO abandoned_ids (gen_id, at, record) VALUES (?, ?, ?)", genId, now, recordJson);
  }

  /** The newest record of this generation still here (settled or abandoned, not yet stored). */
  pending(genId: string): NewGeneration | null {
    const row = this.sql
      .exec<{ record: string }>(
        `SELECT seq, record FROM debits WHERE gen_id = ?1 AND seq >= ?2 AND (seq > ?3 OR EXISTS (SELECT 1 FROM record_batches b WHERE debits.seq BETWEEN b.first_seq AND b.last_seq))
         UNION ALL SELECT seq, record FROM outbox WHERE gen_id = ?1 ORDER BY seq DESC LIMIT 1`,
        genId,
        this.storedBelow(),
        this.assignedUpto(),
      )
      .toArray()[0];
    return row ? (JSON.parse(row.record) as NewGeneration) : null;
  }

  /** The newest records not yet stored, newest first, one per generation (its newest), at most `limit` (≤ 500). */
  newestPending(limit: number): NewGeneration[] {
    const rows = this.sql
      .exec<{ gen_id: string; record: string }>(
        `SELECT seq, gen_id, record FROM debits WHERE seq > ?1
         UNION ALL SELECT d.seq, d.gen_id, d.record FROM record_batches b JOIN debits d ON d.seq BETWEEN b.first_seq AND b.last_seq
         UNION ALL SELECT seq, gen_id, record FROM outbox ORDER BY seq DESC LIMIT ?2`,
        this.assignedUpto(),
        2 * Math.min(Math.max(limit, 0), 500), // a late settle and the abandoned record it replaces are two rows of one generation
      )
      .toArray();
    const seen = new Set<string>();
    return rows
      .filter((r) => !seen.has(r.gen_id) && seen.add(r.gen_id))
      .slice(0, limit)
      .map((r) => JSON.parse(r.record) as NewGeneration);
  }

  /** Records not yet stored: the outbox's rows, debits in no batch yet, debits in batches not acknowledged. */
  size(): number {
    return this.sql
      .exec<{ n: number }>(
        `SELECT (SELECT COUNT(*) FROM outbox) + (SELECT COUNT(*) FROM debits WHERE seq > ?1)
          + (SELECT coalesce(sum((SELECT COUNT(*) FROM debits d WHERE d.seq BETWEEN b.first_seq AND b.last_seq)), 0) FROM record_batches b) AS n`,
        this.assignedUpto(),
      )
      .one().n;
  }

  /**
   * Forgets old abandoned records, and debits settled before `debitsBefore` whose records are stored (a
   * debit whose record is still pending stays). Walks the debits from the oldest in sequence order and
   * stops at the first one too young, so it reads about as many rows as it deletes.
   */
  prune(now: number, debitsBefore: number): void {
    this.sql.exec("DELETE FROM abandoned_ids WHERE at < ?", now - ABANDONED_KEPT_MS);
    const young = this.sql.exec<{ seq: number }>("SELECT seq FROM debits WHERE settled_at >= ? ORDER BY seq LIMIT 1", debitsBefore).toArray()[0];
    const below = Math.min(young?.seq ?? Number.MAX_SAFE_INTEGER, this.storedBelow());
    this.sql.exec("DELETE FROM debits WHERE seq < ? AND settled_at < ?", below, debitsBefore);
  }

  /**
   * Drops the records of debits already stored, keeping the debits (exactly-once): one row written each,
   * so only when the ledger's database passes `keepBytes` (a busy account: 7 days of records in debits).
   */
  dropStoredRecords(keepBytes: number): number {
    if (this.sql.databaseSize <= keepBytes) return 0;
    const dropped = this.sql.exec("UPDATE debits SET record = NULL, replaced = NULL WHERE seq < ? AND record IS NOT NULL", this.storedBelow());
    dropped.toArray(); // run to the end: rowsWritten is final then
    return dropped.rowsWritten;
  }
}
