import type { GrantRecord, GrantRequest, GrantResult, GrantsSummary, ReverseRequest, ReverseResult } from "../contract";
import { totals } from "./balance";
import type { LedgerDb } from "./ledger-db";

// Credits: grants (admin, payments, account creation) and what is taken back of them (refunds, disputes).
// credits_nano = Σ grants − Σ reversals, always (audits check it). docs/payments.md.

/**
 * Adds credits once per grant id: a repeated grant (a retried command, a resubmitted payment) changes
 * nothing and says so. Credits are always the sum of the grants table.
 */
export function grant(db: LedgerDb, req: GrantRequest): GrantResult {
  const { grantId, amountNano, source } = req;
  if (!Number.isSafeInteger(amountNano) || amountNano <= 0) throw new RangeError("grant must be a positive whole number of nano-USD");
  if (typeof grantId !== "string" || grantId.length < 1 || grantId.length > 200) throw new RangeError("grant id must be 1 to 200 characters");
  let applied = false;
  db.transaction(() => {
    applied =
      db.sql
        .exec(
          "INSERT OR IGNORE INTO grants (grant_id, amount_nano, source, created_at) VALUES (?, ?, ?, ?) RETURNING grant_id",
          grantId,
          amountNano,
          source,
          db.now(),
        )
        .toArray().length === 1;
    if (applied) db.sql.exec("UPDATE account SET credits_nano = credits_nano + ?, granted = 1 WHERE id = 1", amountNano);
  });
  return { applied, totals: totals(db.sql) };
}

/**
 * Sets what is taken back of a grant (a payment's refunds and withheld disputes) to a total, raised or
 * lowered, at most the grant: one reversal row per grant, so the credits are the grant minus what its
 * charge's state says now, whatever order the events came in. Each figure carries when its state was
 * read; one read earlier than the stored figure's is stale and changes nothing (two events processed at
 * once cannot leave the older reading last). Idempotent: the same ask again changes nothing. The balance
 * may go below zero when the credits were spent already (docs/payments.md).
 */
export function reverse(db: LedgerDb, req: ReverseRequest): ReverseResult {
  const { sql } = db;
  const { grantId, amountNano, observedAt, source } = req;
  if (!Number.isSafeInteger(amountNano) || amountNano < 0) throw new RangeError("reversal must be a whole number of nano-USD ≥ 0");
  if (!Number.isSafeInteger(observedAt) || observedAt < 0) throw new RangeError("observedAt must be a time in Unix ms");
  let changeNano = 0;
  let reversedNano = 0;
  let stale = false;
  db.transaction(() => {
    const granted = sql.exec<{ amount_nano: number }>("SELECT amount_nano FROM grants WHERE grant_id = ?", grantId).toArray()[0];
    if (!granted) throw new Error(`no grant ${grantId} to reverse`);
    const before = sql
      .exec<{ amount_nano: number; observed_at: number }>("SELECT amount_nano, observed_at FROM reversals WHERE grant_id = ?", grantId)
      .toArray()[0];
    const had = before?.amount_nano ?? 0;
    if (before && observedAt < before.observed_at) {
      reversedNano = had;
      stale = true;
      return;
    }
    reversedNano = Math.min(amountNano, granted.amount_nano);
    changeNano = reversedNano - had;
    sql.exec(
      "INSERT INTO reversals (grant_id, amount_nano, observed_at, source, updated_at) VALUES (?, ?, ?, ?, ?) " +
        "ON CONFLICT (grant_id) DO UPDATE SET amount_nano = excluded.amount_nano, observed_at = excluded.observed_at, source = excluded.source, " +
        "updated_at = excluded.updated_at",
      grantId,
      reversedNano,
      observedAt,
      source,
      db.now(),
    );
    if (changeNano !== 0) sql.exec("UPDATE account SET credits_nano = credits_nano - ? WHERE id = 1", changeNano);
  });
  return { changeNano, reversedNano, stale, totals: totals(sql) };
}

/** How many grants and reversals there are and what they add up to (credits = grants − reversals; audits check it). */
export function grantsSummary(sql: SqlStorage): GrantsSummary {
  const row = sql.exec<{ n: number; total: number }>("SELECT COUNT(*) AS n, COALESCE(SUM(amount_nano), 0) AS total FROM grants").one();
  const rev = sql.exec<{ n: number; total: number }>("SELECT COUNT(*) AS n, COALESCE(SUM(amount_nano), 0) AS total FROM reversals").one();
  return { count: row.n, totalNano: row.total, reversals: rev.n, reversedNano: rev.total };
}

/** One grant by id, or null: tells a repeated grant from a different one reusing its id. */
export function findGrant(sql: SqlStorage, grantId: string): GrantRecord | null {
  const row = sql
    .exec<{ amount_nano: number; source: string; created_at: number }>("SELECT amount_nano, source, created_at FROM grants WHERE grant_id = ?", grantId)
    .toArray()[0];
  return row ? { grantId, amountNano: row.amount_nano, source: row.source, createdAt: row.created_at } : null;
}
