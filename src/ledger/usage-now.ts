import type { Env } from "../env";
import type { KeyUsage, Totals } from "./contract";
import { ledgerFor } from "./ledger";
import { accountLedger } from "./isolate-ledgers";
import type { Gathering } from "./settle-batcher";

// What the ledger says, plus this isolate's settles that have not left it yet (a batch waits SETTLE_WINDOW_MS):
// a caller who reads its credits or key right after a completion sees that completion's cost. Added after the
// ledger has answered, and only settles not yet sent, so none is counted twice.

export async function totalsNow(env: Env, accountId: string): Promise<Totals> {
  const totals = await ledgerFor(env, accountId).totals();
  return { ...totals, usageNano: totals.usageNano + accountLedger(env, accountId).gatheringSums().costNano };
}

export async function keyUsageNow(env: Env, accountId: string, keyHash: string): Promise<KeyUsage> {
  const usage = await ledgerFor(env, accountId).keyUsage(keyHash);
  return plus(usage, accountLedger(env, accountId).gatheringSums(keyHash));
}

/** `keyUsageNow` of many keys in one ledger call. */
export async function keysUsageNow(env: Env, accountId: string, keyHashes: string[]): Promise<Record<string, KeyUsage>> {
  const usage = await ledgerFor(env, accountId).keysUsage(keyHashes);
  const account = accountLedger(env, accountId);
  return Object.fromEntries(Object.entries(usage).map(([hash, u]) => [hash, plus(u, account.gatheringSums(hash))]));
}

/** A settle not yet sent is from now: its cost and its BYOK usage count in every window. */
function plus(u: KeyUsage, { costNano: nano, byokNano: byok }: Gathering): KeyUsage {
  if (nano === 0 && byok === 0) return u;
  return {
    usageNano: u.usageNano + nano,
    dailyNano: u.dailyNano + nano,
    weeklyNano: u.weeklyNano + nano,
    monthlyNano: u.monthlyNano + nano,
    byokNano: u.byokNano + byok,
    byokDailyNano: u.byokDailyNano + byok,
    byokWeeklyNano: u.byokWeeklyNano + byok,
    byokMonthlyNano: u.byokMonthlyNano + byok,
  };
}
