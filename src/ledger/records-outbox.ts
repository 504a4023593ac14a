import type { NewGeneration } from "../db/schema";
import type { RecordBatch, RecordItem } from "./record-batch";

/** Most bytes of records one queue message carries (a message may hold 128 KB; the rest is the envelope). */
export const MESSAGE_RECORD_BYTES = 100 * 1024;
/** Abandoned records are remembered this long, so a settle arriving later is known to replace one. */
const ABANDONED_KEPT_MS = 7 * 24 * 3600_000;

/**
 * The ledger's outbox of generation records (one per settled request, or the "abandoned" record of one
 * that died), in the ledger Durable Object's SQLite. Records leave it in **batches** for the records
 * queue (src/generations/store-batches.ts writes them to R2): the alarm gives the oldest unassigned
 * records a batch — a range of outbox rows in `record_batches`, named `<account>:<n>` by a number that
 * never goes back — before it sends them, so a batch sent again (its send not confirmed, or its store not
 * acknowledged within the ack timeout) is the same batch, which the store takes once. A record stays here,
 * readable by `/generation`, until the store acknowledges its batch: at every moment it is here or stored.
 *
 * SQLite rows written per record: its row and its `gen_id` index entry, once at the settle and once at
 * the delete (4); per settle batch, the row counter; per batch, its `record_batches` row (written, marked
 * sent, deleted) and the batch counter.
 *
 * A settle that arrives after its request's hold expired replaces the abandoned record written then:
 * here, if that one is not in a batch yet; otherwise the new record carries the abandoned one
 * (`replaced`) and the store counts it in place of it (src/generations/store-batches.ts).
 */
export class RecordsOutbox {
  constructor(private readonly sql: SqlStorage) {}

  /** Rows above this are in no batch yet. */
  private assignedUpto(): number {
    return this.sql.exec<{ n: number }>("SELECT assigned_upto AS n FROM outbox_state").one().n;
  }

  /** The records of settles (one per generation id), replacing an unassigned earlier one of the same id. */
  addSettled(records: Array<{ genId: string; record: NewGeneration }>): void {
    const upto = this.assignedUpto();
    let seq = this.nextSeq();
    for (const { genId, record } of records) {
      const abandoned = this.sql.exec<{ record: string }>("DELETE FROM abandoned_ids WHERE gen_id = ? RETURNING record", genId).toArray()[0];
      const unassigned = this.sql.exec<{ abandoned: number }>("DELETE FROM outbox WHERE gen_id = ? AND seq > ? RETURNING abandoned", genId, upto).toArray()[0];
      // An abandoned record still unassigned is simply gone; one already batched is replaced in the store.
      const replaced = abandoned && !(unassigned && unassigned.abandoned === 1) ? abandoned.record : null;
      this.sql.exec("INSERT INTO outbox (seq, gen_id, record, abandoned, replaced) VALUES (?, ?, ?, 0, ?)", seq++, genId, JSON.stringify(record), replaced);
    }
    this.sql.exec("UPDATE outbox_state SET next_seq = ?", seq);
  }

  /** The record a request leaves when its hold expires (it died without settling); a settle may replace it later. */
  addAbandoned(genId: string, recordJson: string, now: number): void {
    if (this.sql.exec("SELECT 1 FROM outbox WHERE gen_id = ?", genId).toArray().length > 0) return;
    const seq = this.nextSeq();
    this.sql.exec("INSERT INTO outbox (seq, gen_id, record, abandoned) VALUES (?, ?, ?, 1)", seq, genId, recordJson);
    this.sql.exec("UPDATE outbox_state SET next_seq = ?", seq + 1);
    this.sql.exec("INSERT OR REPLACE INTO abandoned_ids (gen_id, at, record) VALUES (?, ?, ?)", genId, now, recordJson);
  }

  /** The next row's number: it never goes back, so "above `assigned_upto`" is exactly "in no batch yet". */
  private nextSeq(): number {
    return this.sql.exec<{ n: number }>("SELECT next_seq AS n FROM outbox_state").one().n;
  }

  /** The newest record of this generation still here (settled, not yet stored). */
  pending(genId: string): NewGeneration | null {
    const row = this.sql.exec<{ record: string }>("SELECT record FROM outbox WHERE gen_id = ? ORDER BY seq DESC LIMIT 1", genId).toArray()[0];
    return row ? (JSON.parse(row.record) as NewGeneration) : null;
  }

  size(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }

  /** Gives the oldest unassigned records (at most `max`) batches of at most MESSAGE_RECORD_BYTES of records each. */
  assign(max: number): void {
    const upto = this.assignedUpto();
    const rows = this.sql
      .exec<{ seq: number; bytes: number; record: string | null }>(
        "SELECT seq, length(CAST(record AS BLOB)) + coalesce(length(CAST(replaced AS BLOB)), 0) AS bytes, CASE WHEN seq = (SELECT MIN(seq) FROM outbox WHERE seq > ?1) THEN record END AS record FROM outbox WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        upto,
        max,
      )
      .toArray();
    if (rows.length === 0) return;
    const accountId = (JSON.parse(rows[0]!.record!) as NewGeneration).accountId;
    let next = this.sql.exec<{ n: number }>("SELECT next_batch AS n FROM outbox_state").one().n;
    let first = 0;
    let bytes = 0;
    const close = (last: number) => {
      this.sql.exec("INSERT INTO record_batches (batch, first_seq, last_seq) VALUES (?, ?, ?)", `${accountId}:${next++}`, rows[first]!.seq, rows[last]!.seq);
    };
    for (let i = 0; i < rows.length; i++) {
      if (i > first && bytes + rows[i]!.bytes > MESSAGE_RECORD_BYTES) {
        close(i - 1);
        first = i;
        bytes = 0;
      }
      bytes += rows[i]!.bytes;
    }
    close(rows.length - 1);
    this.sql.exec("UPDATE outbox_state SET assigned_upto = ?, next_batch = ?", rows.at(-1)!.seq, next);
  }

  /** Batches to send now: never sent, or sent at or before `resendBefore` without an acknowledgement. */
  due(resendBefore: number): RecordBatch[] {
    const rows = this.sql
      .exec<{ batch: string; record: string; abandoned: number; replaced: string | null }>(
        `SELECT b.batch, o.record, o.abandoned, o.replaced FROM record_batches b JOIN outbox o ON o.seq BETWEEN b.first_seq AND b.last_seq
          WHERE b.sent_at IS NULL OR b.sent_at <= ? ORDER BY o.seq`,
        resendBefore,
      )
      .toArray();
    const batches = new Map<string, RecordItem[]>();
    for (const r of rows) {
      const items = batches.get(r.batch) ?? [];
      items.push({ record: r.record, ...(r.abandoned ? { abandoned: true } : {}), ...(r.replaced !== null ? { replaced: r.replaced } : {}) });
      batches.set(r.batch, items);
    }
    return [...batches].map(([batch, items]) => ({ v: 1, accountId: batch.slice(0, batch.lastIndexOf(":")), batch, items }));
  }

  markSent(batches: string[], now: number): void {
    for (const b of batches) this.sql.exec("UPDATE record_batches SET sent_at = ? WHERE batch = ?", now, b);
  }

  /** Every sent batch is due again at once: how many there are. */
  resendAll(): number {
    return this.sql.exec("UPDATE record_batches SET sent_at = NULL WHERE sent_at IS NOT NULL RETURNING batch").toArray().length;
  }

  /** The store has the batch: its records leave (a record replaced meanwhile is another row, after the batch, and stays). */
  stored(batch: string): number {
    const range = this.sql
      .exec<{ first: number; last: number }>("DELETE FROM record_batches WHERE batch = ? RETURNING first_seq AS first, last_seq AS last", batch)
      .toArray()[0];
    if (!range) return 0;
    return this.sql.exec("DELETE FROM outbox WHERE seq BETWEEN ? AND ? RETURNING seq", range.first, range.last).toArray().length;
  }

  /** When the next sent batch is due again (its ack timeout ends), 0 when none waits; and whether records or batches wait to be sent. */
  next(ackTimeoutMs: number): { resendAt: number; unassigned: boolean } {
    const sent = this.sql.exec<{ t: number | null }>("SELECT MIN(sent_at) AS t FROM record_batches").one().t;
    const unsent = this.sql.exec("SELECT 1 FROM record_batches WHERE sent_at IS NULL LIMIT 1").toArray().length > 0;
    const unassigned = this.sql.exec("SELECT 1 FROM outbox WHERE seq > ? LIMIT 1", this.assignedUpto()).toArray().length > 0;
    return { resendAt: sent === null ? 0 : sent + ackTimeoutMs, unassigned: unsent || unassigned };
  }

  prune(now: number): void {
    this.sql.exec("DELETE FROM abandoned_ids WHERE at < ?", now - ABANDONED_KEPT_MS);
  }
}
