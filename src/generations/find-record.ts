/** One place a record may be: resolves with it, or null/undefined when it is not there. */
export type RecordSource<T> = () => Promise<T | null | undefined>;

/**
 * Finds a record that moves forward through stages — a settle leaves the isolate's batch for the
 * ledger's outbox, and the outbox for D1 — and is in at least one of them at every moment (the
 * ledger writes D1 before it deletes the outbox row). `stages` are given in that order, the final
 * store last. The final store is read first (most records are long there); on a miss every stage is
 * read in order, the final store again last. A record can only move forward, so it cannot slip past
 * reads made in its own direction: one that was anywhere when the search began is found.
 */
export async function findAcrossStages<T>(stages: readonly RecordSource<T>[]): Promise<T | undefined> {
  const final = stages.at(-1);
  if (!final) return undefined;
  const settled = await final();
  if (settled != null) return settled;
  for (const stage of stages) {
    const found = await stage();
    if (found != null) return found;
  }
  return undefined;
}
