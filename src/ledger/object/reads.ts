import { windowStarts } from "../../keys/usage-windows";
import type { EndedSlice, KeyUsage, OpenHold, SliceAudit } from "../contract";
import { NO_USAGE } from "../../keys/key-usage";
import { MAX_BOUND_PARAMS } from "./ledger-db";

// What the ledger answers without changing anything: keys' usage (for /keys, limits, the console) and
// audits of what is held and of slices that ended unsettled. The balance itself: balance.ts.

/** Audit rows listed by `sliceAudit()`. */
const AUDIT_ROWS = 50;

export function keyUsage(sql: SqlStorage, keyHash: string, now: number): KeyUsage {
  return keysUsage(sql, [keyHash], now)[keyHash]!;
}

/** `keyUsage` of many keys in one call (a page of /keys, the console's list); keys without usage get zeros. */
export function keysUsage(sql: SqlStorage, keyHashes: string[], now: number): Record<string, KeyUsage> {
  const { day, week, month } = windowStarts(now);
  const out: Record<string, KeyUsage> = {};
  for (const h of keyHashes) out[h] = { ...NO_USAGE };
  const per = MAX_BOUND_PARAMS - 3; // three window starts bound beside the hashes
  for (let i = 0; i < keyHashes.length; i += per) {
    const chunk = keyHashes.slice(i, i + per);
    const rows = sql.exec<
      { key_hash: string } & Record<"total" | "daily" | "weekly" | "monthly" | "byok" | "byok_daily" | "byok_weekly" | "byok_monthly", number>
    >(
      `SELECT key_hash, SUM(usage_nano) AS total,
         SUM(CASE WHEN day >= ?1 THEN usage_nano ELSE 0 END) AS daily,
         SUM(CASE WHEN day >= ?2 THEN usage_nano ELSE 0 END) AS weekly,
         SUM(CASE WHEN day >= ?3 THEN usage_nano ELSE 0 END) AS monthly,
         SUM(byok_nano) AS byok,
         SUM(CASE WHEN day >= ?1 THEN byok_nano ELSE 0 END) AS byok_daily,
         SUM(CASE WHEN day >= ?2 THEN byok_nano ELSE 0 END) AS byok_weekly,
         SUM(CASE WHEN day >= ?3 THEN byok_nano ELSE 0 END) AS byok_monthly
       FROM key_usage WHERE key_hash IN (${chunk.map((_, j) => `?${j + 4}`).join(", ")}) GROUP BY key_hash`,
      day,
      week,
      month,
      ...chunk,
    );
    for (const r of rows)
      out[r.key_hash] = {
        usageNano: r.total,
        dailyNano: r.daily,
        weeklyNano: r.weekly,
        monthlyNano: r.monthly,
        byokNano: r.byok,
        byokDailyNano: r.byok_daily,
        byokWeeklyNano: r.byok_weekly,
        byokMonthlyNano: r.byok_monthly,
      };
  }
  return out;
}

/** The oldest open holds and slices (requests admitted, not yet settled), for audits. */
export function openHolds(sql: SqlStorage, limit = 100): OpenHold[] {
  const holds = sql
    .exec<{ gen_id: string; amount_nano: number; created_at: number; renewed_at: number }>(
      "SELECT gen_id, amount_nano, created_at, renewed_at FROM holds ORDER BY created_at LIMIT ?",
      limit,
    )
    .toArray()
    .map((h): OpenHold => ({
      id: h.gen_id,
      kind: "request",
      amountNano: h.amount_nano,
      createdAt: h.created_at,
      renewedAt: h.renewed_at,
      admitted: null,
      settled: null,
      released: false,
    }));
  const slices = sql
    .exec<{ lease_id: string; amount_nano: number; created_at: number; renewed_at: number; admitted: number; settled: number; released_at: number | null }>(
      "SELECT lease_id, amount_nano, created_at, renewed_at, admitted, settled, released_at FROM slices ORDER BY created_at LIMIT ?",
      limit,
    )
    .toArray()
    .map((s): OpenHold => ({
      id: s.lease_id,
      kind: "slice",
      amountNano: s.amount_nano,
      createdAt: s.created_at,
      renewedAt: s.renewed_at,
      admitted: s.admitted,
      settled: s.settled,
      released: s.released_at !== null,
    }));
  return [...holds, ...slices].sort((a, b) => a.createdAt - b.createdAt).slice(0, limit);
}

/** Slices that ended with requests admitted from them that never settled here (last 7 days). */
export function sliceAudit(sql: SqlStorage): SliceAudit {
  const sums = sql
    .exec<{ unsettled: number; expired: number }>(
      "SELECT COALESCE(SUM(MAX(admitted - settled, 0)), 0) AS unsettled, COALESCE(SUM(ended = 'expired'), 0) AS expired FROM slice_audit",
    )
    .one();
  const recent = sql
    .exec<{ lease_id: string; admitted: number; settled: number; ended_at: number; ended: string }>(
      "SELECT * FROM slice_audit ORDER BY ended_at DESC LIMIT ?",
      AUDIT_ROWS,
    )
    .toArray()
    .map((r): EndedSlice => ({
      leaseId: r.lease_id,
      admitted: r.admitted,
      settled: r.settled,
      endedAt: r.ended_at,
      ended: r.ended === "expired" ? "expired" : "released",
    }));
  return { unsettledAdmissions: sums.unsettled, expiredSlices: sums.expired, recent };
}
