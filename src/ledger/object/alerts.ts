import type { AlertEvent, AlertRules, FiredAlert } from "../../alerts/events";
import { nanoToUsd } from "../../catalog/money";
import { windowStart } from "../../keys/usage-windows";
import type { SettleRequest } from "../contract";
import { keyUsageNano } from "./balance";
import { limitCostNano } from "../byok-usage";

// Budget alerts in the ledger (docs/teams.md, "Budget alerts"): the account's thresholds live here, where the
// settled usage they are compared with is, and a settle that crosses one writes the alert in its own
// transaction. `alerts_fired` is both the memory (a key's threshold fires once per window: unique on key,
// threshold amount and window start) and the outbox (sent_at NULL: the alarm sends it to the alerts queue).

const ACCOUNT = "account";
/** Fired alerts of past windows are kept this long for the console's list (a window is at most a month). */
const FIRED_KEPT_MS = 40 * 24 * 3600_000;

/** The account's thresholds. */
export function alertRules(sql: SqlStorage): AlertRules {
  const rules: AlertRules = { balanceBelowNano: [], keyPercents: {} };
  for (const r of sql.exec<{ subject: string; thresholds: string }>("SELECT subject, thresholds FROM alert_rules")) {
    const values = JSON.parse(r.thresholds) as number[];
    if (r.subject === ACCOUNT) rules.balanceBelowNano = values;
    else rules.keyPercents[r.subject] = values;
  }
  return rules;
}

/** Sets the thresholds of one key (`keyHash`) or of the account's balance (null); none removes them. */
export function setAlertThresholds(sql: SqlStorage, keyHash: string | null, thresholds: number[], now: number): void {
  const subject = keyHash ?? ACCOUNT;
  if (thresholds.length === 0) sql.exec("DELETE FROM alert_rules WHERE subject = ?", subject);
  else
    sql.exec(
      "INSERT INTO alert_rules (subject, thresholds, updated_at) VALUES (?, ?, ?) ON CONFLICT (subject) DO UPDATE SET thresholds = excluded.thresholds, updated_at = excluded.updated_at",
      subject,
      JSON.stringify(sortedUnique(thresholds)),
      now,
    );
}

/**
 * Inside a settle's transaction, after its usage was added: fires each threshold the settled requests
 * crossed. A key's percent fires when its usage in its limit's window (the ledger's own `key_usage`, with its
 * BYOK usage when its limit counts it) is at or past that share of the limit the settle carries and it has not fired in this window; the balance's
 * amount fires when the settle takes the balance from at or above it to below it (it re-arms when credits
 * take the balance back up). Only requests this call applied count, so a retried settle fires nothing twice.
 * Returns how many alerts it wrote.
 */
export function fireAlerts(sql: SqlStorage, settled: SettleRequest[], balanceBeforeNano: number, now: number): number {
  if (settled.length === 0) return 0;
  const accountId = settled[0]!.record.accountId;
  let fired = 0;
  const fire = (subject: string, threshold: number, window: string, event: Omit<AlertEvent, "id" | "created" | "account_id">) => {
    const id = "alrt_" + crypto.randomUUID().replaceAll("-", "");
    const full = { id, created: Math.floor(now / 1000), account_id: accountId, ...event } as AlertEvent;
    const rows = sql
      .exec(
        "INSERT OR IGNORE INTO alerts_fired (id, subject, threshold, window, fired_at, event) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        id,
        subject,
        threshold,
        window,
        now,
        JSON.stringify(full),
      )
      .toArray();
    fired += rows.length;
  };
  const lastByKey = new Map<string, SettleRequest>();
  for (const i of settled) if (i.keyLimit && limitCostNano(i, i.keyLimit.includeByok === true) > 0) lastByKey.set(i.keyHash, i);
  for (const [keyHash, item] of lastByKey) {
    const percents = thresholdsOf(sql, keyHash);
    const limit = item.keyLimit!;
    if (percents.length === 0 || limit.nano <= 0) continue;
    const from = windowStart(limit.reset, now);
    const usage = keyUsageNano(sql, keyHash, from, limit.includeByok === true);
    for (const p of percents) {
      const threshold = ceilShare(limit.nano, p);
      if (usage < threshold) continue;
      fire(keyHash, threshold, from ?? "all", {
        type: "key.budget_threshold",
        data: {
          key_hash: keyHash,
          threshold_percent: p,
          limit_usd: nanoToUsd(limit.nano),
          usage_usd: nanoToUsd(usage),
          limit_reset: limit.reset,
          window_start: from,
        },
      });
    }
  }
  const balanceAfter = balanceNano(sql);
  for (const amount of thresholdsOf(sql, ACCOUNT))
    if (balanceBeforeNano >= amount && balanceAfter < amount)
      fire(ACCOUNT, amount, `crossed ${now} ${crypto.randomUUID()}`, {
        type: "account.balance_below",
        data: { threshold_usd: nanoToUsd(amount), balance_usd: nanoToUsd(balanceAfter) },
      });
  return fired;
}

/** Credits less settled usage: what the console calls the balance. */
export function balanceNano(sql: SqlStorage): number {
  return sql.exec<{ v: number }>("SELECT credits_nano - usage_nano AS v FROM account WHERE id = 1").one().v;
}

/** Alerts not yet handed to the queue, oldest first. */
export function unsentAlerts(sql: SqlStorage, limit: number): Array<{ id: string; event: AlertEvent }> {
  return sql
    .exec<{ id: string; event: string }>("SELECT id, event FROM alerts_fired WHERE sent_at IS NULL ORDER BY fired_at, rowid LIMIT ?", limit)
    .toArray()
    .map((r) => ({ id: r.id, event: JSON.parse(r.event) as AlertEvent }));
}

export function markAlertsSent(sql: SqlStorage, ids: string[], now: number): void {
  for (const id of ids) sql.exec("UPDATE alerts_fired SET sent_at = ? WHERE id = ?", now, id);
}

/** The newest fired alerts, newest first. */
export function alertsFired(sql: SqlStorage, limit: number): FiredAlert[] {
  return sql
    .exec<{ event: string; sent_at: number | null }>(
      "SELECT event, sent_at FROM alerts_fired ORDER BY fired_at DESC, rowid DESC LIMIT ?",
      Math.min(Math.max(limit, 0), 500),
    )
    .toArray()
    .map((r) => ({ event: JSON.parse(r.event) as AlertEvent, sentAt: r.sent_at }));
}

/** Forgets sent alerts of windows long past (the memory of a key's all-time window stays: it has no next window). */
export function pruneAlerts(sql: SqlStorage, now: number): void {
  sql.exec("DELETE FROM alerts_fired WHERE sent_at IS NOT NULL AND fired_at < ? AND window <> 'all'", now - FIRED_KEPT_MS);
}

function thresholdsOf(sql: SqlStorage, subject: string): number[] {
  const row = sql.exec<{ thresholds: string }>("SELECT thresholds FROM alert_rules WHERE subject = ?", subject).toArray()[0];
  return row ? (JSON.parse(row.thresholds) as number[]) : [];
}

/** ⌈limit × percent ÷ 100⌉ in exact integers (a limit × 100 may pass 2^53). */
function ceilShare(limitNano: number, percent: number): number {
  return Number((BigInt(limitNano) * BigInt(percent) + 99n) / 100n);
}

function sortedUnique(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}
