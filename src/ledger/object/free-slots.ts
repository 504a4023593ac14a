import { utcDay, windowEnd } from "../../keys/usage-windows";
import type { FreeLimitHit, FreeLimits } from "../free-limits";
import { one, RETENTION_MS } from "./ledger-db";

/**
 * Counts a free request against the account's limits, or says which one it would exceed (then it is
 * not counted): a sliding minute (the oldest of the last minute's admissions frees the next slot) and
 * the UTC day, whose limit depends on the credits ever granted to the account.
 */
export function countFree(sql: SqlStorage, limits: FreeLimits, now: number, genId: string): FreeLimitHit | null {
  const hit = (window: FreeLimitHit["window"], limit: number, resetAt: number): FreeLimitHit => ({
    window,
    limit,
    resetAt,
    retryAfterS: Math.max(1, Math.ceil((resetAt - now) / 1000)),
  });
  sql.exec("DELETE FROM free_minute WHERE at <= ?", now - 60_000);
  const inMinute = one(sql, "SELECT COUNT(*) AS v FROM free_minute");
  if (inMinute >= limits.perMinute) {
    // A slot frees when enough of the oldest leave the window to go below the limit (it may have been lowered).
    const freeing = one(sql, "SELECT at AS v FROM free_minute ORDER BY at LIMIT 1 OFFSET ?", inMinute - limits.perMinute);
    return hit("minute", limits.perMinute, freeing + 60_000);
  }
  const day = utcDay(now);
  // credits_nano is the sum of the grants (kept so by grant()), one row to read.
  const perDay = one(sql, "SELECT credits_nano AS v FROM account WHERE id = 1") >= limits.boughtNano ? limits.perDayBought : limits.perDay;
  const today = sql.exec<{ count: number }>("SELECT count FROM free_days WHERE day = ?", day).toArray()[0]?.count ?? 0;
  if (today >= perDay) return hit("day", perDay, windowEnd("daily", now)!);
  sql.exec("INSERT INTO free_minute (at, gen_id) VALUES (?, ?)", now, genId);
  sql.exec("INSERT INTO free_days (day, count) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET count = count + 1", day);
  sql.exec("DELETE FROM free_days WHERE day < ?", utcDay(now - RETENTION_MS));
  return null;
}

/** Gives back the free slot a request's admission counted (a priced endpoint served it): its minute row and its day's count. */
export function releaseFree(sql: SqlStorage, genId: string, admittedAt: number): void {
  sql.exec("DELETE FROM free_minute WHERE gen_id = ?", genId);
  sql.exec("UPDATE free_days SET count = count - 1 WHERE day = ? AND count > 0", utcDay(admittedAt));
}
