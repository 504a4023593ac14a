import type { SettleRequest } from "../contract";
import type { LedgerDb } from "./ledger-db";

/** The UTC month of a time, `YYYY-MM`. */
export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/**
 * The BYOK fee waived while the account's BYOK requests of the UTC month are within its allowance
 * (BYOK_FREE_REQUESTS_PER_MONTH, docs/byok.md): each BYOK request settled here for the first time counts
 * once in `byok_months`, and one within the allowance is debited 0, its record saying so. Runs inside the
 * settle's transaction, before the debits are written, so a retried settle neither counts nor waives twice.
 */
export function waiveByokFees(db: LedgerDb, items: SettleRequest[], now: number): SettleRequest[] {
  const byok = items.filter((i) => i.byok);
  if (byok.length === 0) return items;
  const { sql } = db;
  const seen = new Set<string>();
  for (const i of byok) if (sql.exec("SELECT 1 FROM debits WHERE gen_id = ?", i.genId).toArray().length) seen.add(i.genId);
  const free = db.timings.byokFreeRequestsPerMonth;
  const month = utcMonth(now);
  return items.map((i) => {
    if (!i.byok || seen.has(i.genId)) return i;
    seen.add(i.genId); // listed twice in one batch: counted once
    const { requests } = sql
      .exec<{ requests: number }>(
        "INSERT INTO byok_months (month, requests) VALUES (?, 1) ON CONFLICT (month) DO UPDATE SET requests = requests + 1 RETURNING requests",
        month,
      )
      .one();
    if (requests > free || i.costNano === 0) return i;
    return { ...i, costNano: 0, record: { ...i.record, costNano: 0 } };
  });
}
