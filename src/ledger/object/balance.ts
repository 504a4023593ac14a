import type { Totals } from "../contract";
import { one } from "./ledger-db";

// The account's balance as the ledger's tables hold it: credits (Σ grants − Σ reversals), settled usage,
// and what holds and slices of requests in flight reserve.

export function totals(sql: SqlStorage): Totals {
  const row = sql
    .exec<{ credits_nano: number; usage_nano: number; granted: number }>("SELECT credits_nano, usage_nano, granted FROM account WHERE id = 1")
    .one();
  return { creditsNano: row.credits_nano, usageNano: row.usage_nano, heldNano: heldNano(sql), granted: row.granted === 1 };
}

/** What admissions may still hold: credits less usage less what is held (≤ 0: nothing). */
export function available(sql: SqlStorage): number {
  const t = totals(sql);
  return t.creditsNano - t.usageNano - t.heldNano;
}

export function heldNano(sql: SqlStorage): number {
  return one(sql, "SELECT (SELECT COALESCE(SUM(amount_nano),0) FROM holds) + (SELECT COALESCE(SUM(amount_nano),0) FROM slices) AS v");
}

/** A key's settled usage since the UTC day `from` (inclusive), or ever when null; with its BYOK usage when `withByok` (include_byok_in_limit). */
export function keyUsageNano(sql: SqlStorage, keyHash: string, from: string | null = null, withByok = false): number {
  const sum = withByok ? "usage_nano + byok_nano" : "usage_nano";
  return one(sql, `SELECT COALESCE(SUM(${sum}),0) AS v FROM key_usage WHERE key_hash = ? AND day >= ?`, keyHash, from ?? "");
}

/** What holds of a key's requests reserve of its limit: the carrier's whole bill where the key counts BYOK usage, else their hold. */
export function keyHeldNano(sql: SqlStorage, keyHash: string): number {
  return one(sql, "SELECT COALESCE(SUM(COALESCE(key_amount_nano, amount_nano)),0) AS v FROM holds WHERE key_hash = ?", keyHash);
}
