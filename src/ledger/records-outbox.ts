import type { NewGeneration } from "../db/schema";
import type { RecordBatch, RecordItem } from "../generations/record-batch";

/** Most bytes of records one queue message carries (a message may hold 128 KB; the rest is the envelope). */
export const MESSAGE_RECORD_BYTES = 100 * 1024;
/** Abandoned records' ids are remembered this long, so a settle arriving later is known to replace one. */
const ABANDONED_KEPT_MS = 7 * 24 * 3600_000;

/**
 * The ledger's outbox of generation records (one per settled request, or the "abandoned" record of one
 * that died), in the ledger Durable Object's SQLite. Records leave it in **batches** for the records
 * queue (src/generations/store-batches.ts writes them to R2): the alarm gives the oldest unassigned
 * records a batch id (deterministic: the account and its rows' outbox sequence numbers) before it sends
 * them, so a batch sent again — its send not confirmed, or its store not acknowledged within the ack
 * timeout — is the same batch, which the store takes once. A record stays here, readable by
 * `/generation` and the console, until the store acknowledges its batch: at every moment it is here or
 * stored, and once stored it is deleted here.
 *
 * A settle that arrives after its request's hold expired replaces the abandoned record written then:
 * here, if that one has not been given to a batch yet; otherwise the new record carries the abandoned one (`replaced`) and
 * the store counts it in place of the abandoned one (src/db/record-rollups.ts).
 */
export class RecordsOutbox {
  constructor(private readonly sql: SqlStorage) {}

  /** The records of settles (one per generation id), replacing an unassigned earlier one of the same id. */
  addSettled(records: Array<{ genId: string; record: NewGeneration }>): void {
    for (const { genId, record } of records) {
      const abandoned = this.sql.exec<{ record: string }>("DELETE FROM abandoned_ids WHERE gen_id = ? RETURNING record", genId).toArray()[0];
      const unassigned = this.sql.exec<{ abandoned: number }>("DELETE FROM outbox WHERE gen_id = ? AND batch IS NULL RETURNING abandoned", genId).toArray()[0];
      // An abandoned record still unassigned is simply gone; one already batched is replaced in the store.
      const replaced = abandoned && !(unassigned && unassigned.abandoned === 1) ? abandoned.record : null;
      this.sql.exec("INSERT INTO outbox (gen_id, record, abandoned, replaced) VALUES (?, ?, 0, ?)", genId, JSON.stringify(record), replaced);
    }
  }

  /** The record a request leaves when its hold expires (it died without settling); a settle may replace it later. */
  addAbandoned(genId: string, recordJson: string, now: number): void {
    if (this.sql.exec("SELECT 1 FROM outbox WHERE gen_id = ?", genId).toArray().length > 0) return;
    this.sql.exec("INSERT INTO outbox (gen_id, record, abandoned) VALUES (?, ?, 1)", genId, recordJson);
    this.sql.exec("INSERT OR REPLACE INTO abandoned_ids (gen_id, at, record) VALUES (?, ?, ?)", genId, now, recordJson);
  }

  /** The newest record of this generation still here (settled, not yet stored). */
  pending(genId: string): NewGeneration | null {
    const row = this.sql.exec<{ record: string }>("SELECT record FROM outbox WHERE gen_id = ? ORDER BY seq DESC LIMIT 1", genId).toArray()[0];
    return row ? (JSON.parse(row.record) as NewGeneration) : null;
  }

  /** Every record still here, the newest of each generation, oldest first (at most `limit`). */
  pendingAll(limit: number): NewGeneration[] {
    return this.sql
      .exec<{ record: string }>("SELECT record FROM outbox o WHERE seq = (SELECT MAX(seq) FROM outbox WHERE gen_id = o.gen_id) ORDER BY seq LIMIT ?", limit)
      .toArray()
      .map((r) => JSON.parse(r.record) as NewGeneration);
  }

  size(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }

  /**
   * Gives the oldest unassigned records (at most `max`) batch ids, in batches of at most
   * MESSAGE_RECORD_BYTES of records each. Ids are `<account>:<first seq>-<last seq>`.
   */
  assign(max: number): void {
    const rows = this.sql
      .exec<{ seq: number; bytes: number; record: string | null }>(
        "SELECT seq, length(CAST(record AS BLOB)) + coalesce(length(CAST(replaced AS BLOB)), 0) AS bytes, CASE WHEN seq = (SELECT MIN(seq) FROM outbox WHERE batch IS NULL) THEN record END AS record FROM outbox WHERE batch IS NULL ORDER BY seq LIMIT ?",
        max,
      )
      .toArray();
    if (rows.length === 0) return;
    const accountId = (JSON.parse(rows[0]!.record!) as NewGeneration).accountId;
    let first = 0;
    let bytes = 0;
    const close = (last: number) => {
      const [from, to] = [rows[first]!.seq, rows[last]!.seq];
      this.sql.exec("UPDATE outbox SET batch = ? WHERE seq BETWEEN ? AND ? AND batch IS NULL", `${accountId}:${from}-${to}`, from, to);
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
  }

  /** Batches to send now: never sent, or sent at or before `resendBefore` without an acknowledgement. */
  due(resendBefore: number): RecordBatch[] {
    const rows = this.sql
      .exec<{ batch: string; record: string; abandoned: number; replaced: string | null }>(
        "SELECT batch, record, abandoned, replaced FROM outbox WHERE batch IS NOT NULL AND (sent_at IS NULL OR sent_at <= ?) ORDER BY seq",
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
    for (const b of batches) this.sql.exec("UPDATE outbox SET sent_at = ? WHERE batch = ?", now, b);
  }

  /** Every sent batch is due again at once: how many there are. */
  resendAll(): number {
    const n = this.sql.exec<{ n: number }>("SELECT COUNT(DISTINCT batch) AS n FROM outbox WHERE batch IS NOT NULL AND sent_at IS NOT NULL").one().n;
    this.sql.exec("UPDATE outbox SET sent_at = NULL WHERE batch IS NOT NULL AND sent_at IS NOT NULL");
    return n;
  }

  /** The store has the batch: its records leave (a record replaced meanwhile is another row, unassigned, and stays). */
  stored(batch: string): number {
    return this.sql.exec("DELETE FROM outbox WHERE batch = ? RETURNING seq", batch).toArray().length;
  }

  /** When the next sent batch is due again (its ack timeout ends), 0 when none waits; and whether unassigned records wait. */
  next(ackTimeoutMs: number): { resendAt: number; unassigned: boolean } {
    const row = this.sql
      .exec<{ sent: number | null; unassigned: number }>(
        "SELECT MIN(sent_at) AS sent, (SELECT COUNT(*) FROM outbox WHERE batch IS NULL OR sent_at IS NULL) AS unassigned FROM outbox WHERE sent_at IS NOT NULL",
      )
      .one();
    return { resendAt: row.sent === null ? 0 : row.sent + ackTimeoutMs, unassigned: row.unassigned > 0 };
  }

  prune(now: number): void {
    this.sql.exec("DELETE FROM abandoned_ids WHERE at < ?", now - ABANDONED_KEPT_MS);
  }
}
