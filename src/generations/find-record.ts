/** One place a record may be: resolves with it, or null/undefined when it is not there. */
export type RecordSource<T> = () => Promise<T | null | undefined>;

/**
 * Finds a record that moves forward through stages — a settle leaves the isolate's batch for the
 * ledger's outbox, the outbox for D1, and D1 for the archive — and is in at least one of them at every
 * moment (the ledger writes D1 before it deletes the outbox row; the archive's commit marks the part
 * archived and deletes the D1 rows in one transaction). `stages` are given in that order. The stage
 * where most records are (`likely`, by default the last) is read first; on a miss every stage is read in
 * order. A record can only move forward, so it cannot slip past reads made in its own direction: one
 * that was anywhere when the search began is found.
 */
export async function findAcrossStages<T>(stages: readonly RecordSource<T>[], likely = stages.length - 1): Promise<T | undefined> {
  const first = stages[likely];
  if (!first) return undefined;
  const found = await first();
  if (found != null) return found;
  for (const stage of stages) {
    const found = await stage();
    if (found != null) return found;
  }
  return undefined;
}
