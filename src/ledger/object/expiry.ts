import { one, type LedgerDb } from "./ledger-db";

/**
 * Ends what no live isolate keeps: a request hold not renewed for the hold TTL (its request died:
 * nothing is debited, and the record made at admission says so; a settle arriving later still
 * applies once); a slice not renewed for the lease TTL (its isolate died); a released slice whose
 * admitted requests never all settled within the hold TTL. Slices that end with admissions not seen
 * settled, or with their isolate dead, are kept in slice_audit.
 */
export function expire(db: LedgerDb, now: number): void {
  const { sql } = db;
  const { holdTtlMs, leaseTtlMs } = db.timings;
  db.transaction(() => {
    const holds = sql.exec<{ gen_id: string; record: string }>("SELECT gen_id, record FROM holds WHERE renewed_at < ?", now - holdTtlMs).toArray();
    for (const h of holds) {
      db.outbox.addAbandoned(h.gen_id, h.record, now);
      sql.exec("DELETE FROM holds WHERE gen_id = ?", h.gen_id);
    }
    const ended = sql
      .exec<{ lease_id: string; admitted: number; settled: number; released_at: number | null }>(
        "DELETE FROM slices WHERE (released_at IS NULL AND renewed_at < ?) OR (released_at IS NOT NULL AND released_at < ?) RETURNING lease_id, admitted, settled, released_at",
        now - leaseTtlMs,
        now - holdTtlMs,
      )
      .toArray();
    for (const s of ended)
      if (s.released_at === null || s.admitted > s.settled)
        sql.exec(
          "INSERT OR REPLACE INTO slice_audit (lease_id, admitted, settled, ended_at, ended) VALUES (?, ?, ?, ?, ?)",
          s.lease_id,
          s.admitted,
          s.settled,
          now,
          s.released_at === null ? "expired" : "released",
        );
  });
}

/** When the next hold or slice would expire (ms epoch), 0 when none is open. */
export function nextExpiry(db: LedgerDb): number {
  const { holdTtlMs, leaseTtlMs } = db.timings;
  const hold = one(db.sql, `SELECT COALESCE(MIN(renewed_at), 0) AS v FROM holds`);
  const slice = one(
    db.sql,
    `SELECT COALESCE(MIN(CASE WHEN released_at IS NULL THEN renewed_at + ${leaseTtlMs} ELSE released_at + ${holdTtlMs} END), 0) AS v FROM slices`,
  );
  const due = [hold ? hold + holdTtlMs : 0, slice].filter((t) => t > 0);
  return due.length ? Math.min(...due) : 0;
}
