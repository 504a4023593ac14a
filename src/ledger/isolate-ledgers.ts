import type { Env } from "../env";
import { randomId } from "../keys/api-key";
import { AccountLedger } from "./account-ledger";
import type { IsolateLedgerApi } from "./contract";
import { realClock } from "./ledger-api";
import { ledgerTimings } from "./ledger-config";
import { ledgerFor } from "./ledger";
import { queueSender } from "./settle-queue";
import { logWarning } from "../log-error";
import { isolate } from "../isolate";

/** Accounts kept per isolate; idle ones are dropped first when there are more. */
const MAX_ACCOUNTS = 10_000;

/** This isolate's side of every account's ledger it has seen: one AccountLedger per account. */
class IsolateLedgers {
  private readonly accounts = new Map<string, AccountLedger>();

  account(env: Env, accountId: string): AccountLedger {
    let a = this.accounts.get(accountId);
    if (!a) {
      if (this.accounts.size >= MAX_ACCOUNTS) this.dropIdle();
      a = new AccountLedger({
        accountId,
        // A stub per call: Durable Object stubs belong to the request that made them.
        ledger: (): IsolateLedgerApi => ledgerFor(env, accountId),
        queue: queueSender(env.SETTLE_QUEUE),
        clock: realClock,
        timings: ledgerTimings(env),
        newLeaseId: () => randomId("lease-", 12),
        log: (message, detail) => logWarning(message, { detail }),
      });
      this.accounts.set(accountId, a);
    }
    return a;
  }

  private dropIdle(): void {
    for (const [id, a] of this.accounts) if (a.idle) this.accounts.delete(id);
  }
}

const isolateLedgers = isolate.slot("ledger clients", () => new IsolateLedgers());

/** The isolate's side of the account's ledger: admission, slices, batched settles. */
export function accountLedger(env: Env, accountId: string): AccountLedger {
  return isolateLedgers.get().account(env, accountId);
}
