import { utcDay } from "../../keys/usage-windows";
import type { SettleRequest, SliceReport } from "../contract";
import { releaseFree } from "./free-slots";
import { execChunked, type LedgerDb } from "./ledger-db";
import { balanceNano, fireAlerts } from "./alerts";
import { waiveByokFees } from "./byok-allowance";
import { byokUpstreamNano } from "../byok-usage";

/**
 * Debits each request's cost and stores its record, exactly once per generation id, in one
 * transaction; takes in the isolate's slice reports and deletes released slices whose admitted
 * requests have all settled (their unspent rest returns to the balance). Returns how many requests
 * this call applied (a retried batch applies none twice). A handful of statements per batch: the
 * debits insert tells which ids are new, and usage, key usage and slice spending are summed first.
 * Order-independent: a release that arrives before some of its slice's settles keeps the slice
 * (and its money held) until they arrive. Each record rides in its debit row (records-outbox.ts), which the
 * alarm sends on in batches.
 */
export function settleBatch(db: LedgerDb, asked: SettleRequest[], slices: SliceReport[] = []): number {
  const { sql } = db;
  let applied = 0;
  let alerts = 0;
  db.transaction(() => {
    const now = db.now();
    // BYOK fees within the month's allowance are waived before anything is debited.
    const items = waiveByokFees(db, asked, now);
    // When each request giving back a free slot was admitted (its hold row, read before it goes).
    const admittedAt = new Map<string, number>();
    for (const i of items)
      if (i.releaseFreeSlot)
        admittedAt.set(
          i.genId,
          sql.exec<{ at: number }>("SELECT created_at AS at FROM holds WHERE gen_id = ?", i.genId).toArray()[0]?.at ?? i.record.createdAt,
        );
    // A request admitted on its own hold releases it, applied or not (a retry finds it gone).
    execChunked(
      sql,
      "DELETE FROM holds WHERE gen_id IN ($)",
      items.filter((i) => !i.leaseId).map((i) => [i.genId]),
    );
    const fresh = insertDebits(db, items, now);
    const settled = items.filter((i) => fresh.delete(i.genId)); // once each, even if listed twice
    applied = settled.length;
    for (const i of settled) if (i.releaseFreeSlot) releaseFree(sql, i.genId, admittedAt.get(i.genId)!);
    const balanceBefore = balanceNano(sql);
    addUsage(sql, settled, now);
    // Budget alerts crossed by these settles, written in this transaction: exactly once however often the batch comes.
    alerts = fireAlerts(sql, settled, balanceBefore, now);
    // What leased requests spent leaves their slice's hold and becomes usage; each counts as settled there.
    for (const [leaseId, { nano, count }] of perLease(settled)) {
      const found = sql
        .exec("UPDATE slices SET amount_nano = MAX(0, amount_nano - ?), settled = settled + ? WHERE lease_id = ? RETURNING lease_id", nano, count, leaseId)
        .toArray();
      if (found.length === 0) sql.exec("UPDATE slice_audit SET settled = settled + ? WHERE lease_id = ?", count, leaseId); // a late settle of an ended slice
    }
    // A late settle supersedes the "abandoned" record an expired hold left.
    db.outbox.settled(settled.map((i) => i.genId));
    for (const s of slices) takeReport(sql, s, now);
    if (slices.some((s) => s.release) || perLease(settled).size > 0) sql.exec("DELETE FROM slices WHERE released_at IS NOT NULL AND settled >= admitted");
  });
  // The alarm batches the records when they are due: the flush delay after the oldest waiting one settled.
  const flushAt = db.outbox.flushAt(db.timings);
  if (flushAt !== null) db.scheduleAlarm(Math.max(0, flushAt - db.now()));
  if (alerts > 0) db.scheduleAlarm(0); // the alarm hands them to the alerts queue, after this commit
  return applied;
}

/** Inserts the debits not seen before, each carrying its record (records-outbox.ts); returns their generation ids. */
function insertDebits(db: LedgerDb, items: SettleRequest[], now: number): Set<string> {
  const fresh = new Set<string>();
  execChunked(
    db.sql,
    "INSERT OR IGNORE INTO debits (seq, gen_id, key_hash, cost_nano, settled_at, record, replaced) VALUES $ RETURNING gen_id",
    db.outbox.debitRows(items, now),
    (r) => fresh.add(r.gen_id as string),
  );
  return fresh;
}

/** The settled costs become the account's usage and their keys' usage of the day; what carriers charged BYOK requests, their keys' BYOK usage. */
function addUsage(sql: SqlStorage, settled: SettleRequest[], now: number): void {
  const usage = sumBy(settled, (i) => i.keyHash);
  const byok = sumBy(settled, (i) => i.keyHash, byokUpstreamNano);
  const total = [...usage.values()].reduce((a, b) => a + b, 0);
  if (total > 0) sql.exec("UPDATE account SET usage_nano = usage_nano + ? WHERE id = 1", total);
  const day = utcDay(now);
  for (const [keyHash, nano] of usage) {
    const byokNano = byok.get(keyHash) ?? 0;
    if (nano > 0 || byokNano > 0)
      sql.exec(
        "INSERT INTO key_usage (key_hash, day, usage_nano, byok_nano) VALUES (?, ?, ?, ?) ON CONFLICT (key_hash, day) DO UPDATE SET usage_nano = usage_nano + excluded.usage_nano, byok_nano = byok_nano + excluded.byok_nano",
        keyHash,
        day,
        nano,
        byokNano,
      );
  }
}

/** Takes in what an isolate says of one of its slices: admissions, its release, the rest it gave back. */
function takeReport(sql: SqlStorage, s: SliceReport, now: number): void {
  // A rest given back leaves the slice once however often it is reported (SET reads the row as it was).
  const returned = s.returnedNano ?? 0;
  const found = sql
    .exec(
      "UPDATE slices SET admitted = MAX(admitted, ?), renewed_at = ?, released_at = CASE WHEN ? THEN COALESCE(released_at, ?) ELSE released_at END, " +
        "amount_nano = MAX(0, amount_nano - MAX(0, ? - returned_nano)), returned_nano = MAX(returned_nano, ?) WHERE lease_id = ? RETURNING lease_id",
      s.admitted,
      now,
      s.release ? 1 : 0,
      now,
      returned,
      returned,
      s.leaseId,
    )
    .toArray();
  if (found.length === 0) sql.exec("UPDATE slice_audit SET admitted = MAX(admitted, ?) WHERE lease_id = ?", s.admitted, s.leaseId);
}

/** Sums the cost (or another figure) of items per key, skipping items without one. */
function sumBy(items: SettleRequest[], key: (i: SettleRequest) => string | undefined, nano = (i: SettleRequest) => i.costNano): Map<string, number> {
  const sums = new Map<string, number>();
  for (const i of items) {
    const k = key(i);
    if (k !== undefined) sums.set(k, (sums.get(k) ?? 0) + nano(i));
  }
  return sums;
}

/** Cost and count of leased items per slice. */
function perLease(items: SettleRequest[]): Map<string, { nano: number; count: number }> {
  const out = new Map<string, { nano: number; count: number }>();
  for (const i of items) {
    if (i.leaseId === undefined) continue;
    const s = out.get(i.leaseId) ?? { nano: 0, count: 0 };
    s.nano += i.costNano;
    s.count++;
    out.set(i.leaseId, s);
  }
  return out;
}
