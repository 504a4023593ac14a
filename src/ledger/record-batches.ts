import type { NewGeneration } from "../db/schema";
import type { RecordBatch, RecordItem } from "./record-batch";
import type { LedgerTimings } from "./ledger-config";

/** Most bytes of records one queue message carries (a message may hold 128 KB; the rest is the envelope). */
export const MESSAGE_RECORD_BYTES = 100 * 1024;

type FlushTimings = Pick<LedgerTimings, "flushDelayMs" | "flushMaxDelayMs" | "flushTargetRecords">;

/** A batch's rows of both tables, in the account's sequence: records riding in their debit, and the outbox's (abandoned, or written before records rode in debits). */
const RANGE = `SELECT seq, record, 0 AS abandoned, replaced FROM debits WHERE seq BETWEEN ?1 AND ?2
  UNION ALL SELECT seq, record, abandoned, replaced FROM outbox WHERE seq BETWEEN ?1 AND ?2 ORDER BY seq`;
/** Bytes of a row's records: its own and the abandoned one it replaces. */
const BYTES = "length(CAST(record AS BLOB)) + coalesce(length(CAST(replaced AS BLOB)), 0)";

/**
 * The ledger's record batches: a batch is a range of the account's sequence numbers in `record_batches`,
 * named `<account>:<n>` by a number that never goes back, so a batch sent again (its send not confirmed, or
 * its store not acknowledged within the ack timeout) is the same batch, which the store takes once. Its
 * records are the rows of that range in `debits` (a settled request's record rides in its debit row) and
 * in `outbox` (abandoned records). **Stored is a watermark, not a write per record**: a record is pending
 * while its sequence number is above `outbox_state.assigned_upto` (in no batch yet) or inside a batch
 * still in `record_batches`; the acknowledgement deletes the batch's row (and its outbox rows), nothing
 * per debit. Per batch the ledger writes its `record_batches` row (inserted, marked sent, deleted) and the
 * state row, whatever its size.
 *
 * Quiet accounts batch more: the waiting records are due `flush_delay_ms` after the oldest of them settled,
 * a delay each flush scales by target ÷ records flushed, between RECORDS_FLUSH_DELAY_MS and
 * RECORDS_FLUSH_MAX_DELAY_MS (kept in the state row the flush writes anyway: the object may be evicted).
 */
export class RecordBatches {
  constructor(protected readonly sql: SqlStorage) {}

  /** Rows above this are in no batch yet. */
  protected assignedUpto(): number {
    return this.sql.exec<{ n: number }>("SELECT assigned_upto AS n FROM outbox_state").one().n;
  }

  /** The flush delay now (ms): the stored one, within the settings' bounds. */
  flushDelay(t: FlushTimings): number {
    const stored = this.sql.exec<{ d: number | null }>("SELECT flush_delay_ms AS d FROM outbox_state").one().d;
    return Math.min(Math.max(stored ?? t.flushDelayMs, t.flushDelayMs), Math.max(t.flushDelayMs, t.flushMaxDelayMs));
  }

  /**
   * When the records in no batch yet are due to be batched (ms epoch): the oldest settle's time + the flush
   * delay; at once when the target is reached (an account that turns busy does not wait out a quiet
   * account's delay) or an abandoned record waits; null when none waits.
   */
  flushAt(t: FlushTimings): number | null {
    const upto = this.assignedUpto();
    if (this.sql.exec("SELECT 1 FROM outbox WHERE seq > ? LIMIT 1", upto).toArray().length > 0) return 0;
    const oldest = this.sql.exec<{ at: number }>("SELECT settled_at AS at FROM debits WHERE seq > ? ORDER BY seq LIMIT 1", upto).toArray()[0];
    if (!oldest) return null;
    const waiting = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM (SELECT 1 FROM debits WHERE seq > ? LIMIT ?)", upto, t.flushTargetRecords).one().n;
    return waiting >= t.flushTargetRecords ? oldest.at : oldest.at + this.flushDelay(t);
  }

  /**
   * Gives the oldest records in no batch yet (at most `max`) batches of at most MESSAGE_RECORD_BYTES of
   * records each, and scales the flush delay to how many there were; returns that number.
   */
  assign(max: number, t?: FlushTimings): number {
    const upto = this.assignedUpto();
    const rows = this.sql
      .exec<{ seq: number; bytes: number }>(
        `SELECT seq, ${BYTES} AS bytes FROM debits WHERE seq > ?1 UNION ALL SELECT seq, ${BYTES} AS bytes FROM outbox WHERE seq > ?1 ORDER BY seq LIMIT ?2`,
        upto,
        max,
      )
      .toArray();
    if (rows.length === 0) return 0;
    const first = this.sql.exec<{ record: string }>(RANGE, rows[0]!.seq, rows[0]!.seq).one().record;
    const accountId = (JSON.parse(first) as NewGeneration).accountId;
    let next = this.sql.exec<{ n: number }>("SELECT next_batch AS n FROM outbox_state").one().n;
    let from = 0;
    let bytes = 0;
    const close = (last: number) => {
      this.sql.exec("INSERT INTO record_batches (batch, first_seq, last_seq) VALUES (?, ?, ?)", `${accountId}:${next++}`, rows[from]!.seq, rows[last]!.seq);
    };
    for (let i = 0; i < rows.length; i++) {
      if (i > from && bytes + rows[i]!.bytes > MESSAGE_RECORD_BYTES) {
        close(i - 1);
        from = i;
        bytes = 0;
      }
      bytes += rows[i]!.bytes;
    }
    close(rows.length - 1);
    const delay = t ? Math.round((this.flushDelay(t) * t.flushTargetRecords) / rows.length) : null;
    this.sql.exec(
      "UPDATE outbox_state SET assigned_upto = ?, next_batch = ?, flush_delay_ms = coalesce(?, flush_delay_ms)",
      rows.at(-1)!.seq,
      next,
      delay === null ? null : Math.min(Math.max(delay, t!.flushDelayMs), Math.max(t!.flushDelayMs, t!.flushMaxDelayMs)),
    );
    return rows.length;
  }

  /** Batches to send now: never sent, or sent at or before `resendBefore` without an acknowledgement. */
  due(resendBefore: number): RecordBatch[] {
    const batches = this.sql
      .exec<{ batch: string; first: number; last: number }>(
        "SELECT batch, first_seq AS first, last_seq AS last FROM record_batches WHERE sent_at IS NULL OR sent_at <= ? ORDER BY first_seq",
        resendBefore,
      )
      .toArray();
    return batches.flatMap(({ batch, first, last }) => {
      const items = this.sql
        .exec<{ record: string; abandoned: number; replaced: string | null }>(RANGE, first, last)
        .toArray()
        .map((r): RecordItem => ({ record: r.record, ...(r.abandoned ? { abandoned: true } : {}), ...(r.replaced !== null ? { replaced: r.replaced } : {}) }));
      return items.length ? [{ v: 1 as const, accountId: batch.slice(0, batch.lastIndexOf(":")), batch, items }] : [];
    });
  }

  markSent(batches: string[], now: number): void {
    for (const b of batches) this.sql.exec("UPDATE record_batches SET sent_at = ? WHERE batch = ?", now, b);
  }

  /** Every sent batch is due again at once: how many there are. */
  resendAll(): number {
    return this.sql.exec("UPDATE record_batches SET sent_at = NULL WHERE sent_at IS NOT NULL RETURNING batch").toArray().length;
  }

  /**
   * The store has the batch: it is no longer pending (its row goes; its debits stay, below the watermark,
   * until they are pruned; its outbox rows go). Returns how many records it held, 0 when it was gone already.
   */
  stored(batch: string): number {
    const range = this.sql
      .exec<{ first: number; last: number }>("DELETE FROM record_batches WHERE batch = ? RETURNING first_seq AS first, last_seq AS last", batch)
      .toArray()[0];
    if (!range) return 0;
    const outbox = this.sql.exec("DELETE FROM outbox WHERE seq BETWEEN ? AND ? RETURNING seq", range.first, range.last).toArray().length;
    return outbox + this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM debits WHERE seq BETWEEN ? AND ?", range.first, range.last).one().n;
  }

  /** The lowest sequence number still pending: every debit below it is stored. */
  protected storedBelow(): number {
    return this.sql
      .exec<{ n: number }>("SELECT min(coalesce((SELECT min(first_seq) FROM record_batches), assigned_upto + 1), assigned_upto + 1) AS n FROM outbox_state")
      .one().n;
  }

  /** When the next sent batch is due again (its ack timeout ends), 0 when none waits; and whether a batch waits to be sent. */
  next(ackTimeoutMs: number): { resendAt: number; unsent: boolean } {
    const sent = this.sql.exec<{ t: number | null }>("SELECT MIN(sent_at) AS t FROM record_batches").one().t;
    const unsent = this.sql.exec("SELECT 1 FROM record_batches WHERE sent_at IS NULL LIMIT 1").toArray().length > 0;
    return { resendAt: sent === null ? 0 : sent + ackTimeoutMs, unsent };
  }
}
