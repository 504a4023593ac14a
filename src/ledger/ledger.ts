import type { Env } from "../env";
import type { LedgerApi } from "./contract";

/** The ledger Durable Object of one account (one per account, named by its id). */
export function ledgerFor(env: Env, accountId: string): LedgerApi {
  return env.LEDGER.get(env.LEDGER.idFromName(accountId));
}
