import type { Caller, Env } from "../env";
import type { NewGeneration } from "../db/schema";
import { ledgerFor } from "./ledger";
import { admitFromSlice } from "./slices";

export type Admission = { ok: true; leaseId?: string } | { ok: false; reason: "balance" | "key_limit" };

/**
 * May this request run? A paid model on a key without a limit is admitted from the isolate's slice
 * of the balance (usually no round trip); a key with a limit asks the ledger, which checks the key's
 * usage and holds; a free model on an unlimited key needs nothing.
 */
export async function admit(
  env: Env,
  caller: Caller,
  req: { genId: string; holdNano: number; paid: boolean; abandoned: () => NewGeneration },
  waitUntil: (p: Promise<unknown>) => void,
): Promise<Admission> {
  const limitNano = caller.key.limitNano;
  if (limitNano === null) {
    if (!req.paid) return { ok: true };
    const sliced = await admitFromSlice(env, caller.accountId, req.holdNano, waitUntil);
    if (sliced.ok || sliced.reason === "balance") return sliced;
  }
  return ledgerFor(env, caller.accountId).admit({
    genId: req.genId,
    keyHash: caller.key.hash,
    limitNano,
    holdNano: req.holdNano,
    paid: req.paid,
    abandoned: req.abandoned(),
  });
}
