import type { Env } from "../env";

/** The ledger Durable Object of one account (one per account, named by its id). */
export function ledgerFor(env: Env, accountId: string) {
  return env.LEDGER.get(env.LEDGER.idFromName(accountId));
}
