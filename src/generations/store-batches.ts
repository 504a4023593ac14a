import type { NewGeneration } from "../db/schema";
import { claimParts, commitParts, type BatchPart, type RollupDelta } from "../db/record-parts";
import { batchPartKey, packPart, storedRecord, utcDay } from "./archive-format";
import { batchSeq } from "./batch-seq";
import type { RecordBatch } from "../ledger/record-batch";

const HOUR_MS = 3_600_000;

/** What storing a batch needs: D1 (the index and rollups), R2 (the objects) and the batch's ledger (its acknowledgement). */
export type StoreDeps = {
  d1: D1Database;
  bucket: R2Bucket;
  /** Tells the account's ledger its batch is stored: the batch's records leave its outbox. */
  acknowledge: (accountId: string, batch: string) => Promise<unknown>;
  now: () => number;
  /** Called after each step; a throw there is a crash at that point (the tests' hook). */
  afterStep?: (step: StoreStep, batch: RecordBatch) => void | Promise<void>;
};
export type StoreStep = "claimed" | "written" | "committed" | "acknowledged";

/**
 * Stores one of a ledger's record batches (docs/storage.md, "Records"): its records, per UTC day they
 * fall in, become one gzip NDJSON object in R2 (the archive's format, named by the batch), indexed in
 * `archive_parts` and summed into `record_rollups` by the one D1 transaction that commits the part; then
 * the ledger drops them from its outbox. Until that commit readers find the records in the outbox; from
 * it, in R2 through the index. A crash after any step leaves a state the next delivery completes: the
 * claim finds its row, the object is written again at the same key with the same bytes, the commit acts
 * only on a part still `writing`, the acknowledgement is idempotent. Nothing is written twice or lost.
 */
export async function storeBatch(deps: StoreDeps, batch: RecordBatch): Promise<void> {
  const days = new Map<string, Array<{ record: ReturnType<typeof storedRecord>; replaced?: NewGeneration }>>();
  for (const item of batch.items) {
    // A stored record's revision is its batch's last outbox number: of two versions of one record (a late
    // settle's replacing an abandoned one) the later batch's is current, wherever compaction moves them.
    const record = { ...storedRecord(JSON.parse(item.record) as NewGeneration), rev: batchSeq(batch.batch) };
    if (record.accountId !== batch.accountId) throw new Error(`records store: batch ${batch.batch} holds another account's record`);
    const day = utcDay(record.createdAt);
    const list = days.get(day) ?? [];
    list.push({ record, ...(item.replaced !== undefined ? { replaced: JSON.parse(item.replaced) as NewGeneration } : {}) });
    days.set(day, list);
  }
  const drafts = await Promise.all(
    [...days]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(async ([day, items]) => {
        const records = items.map((i) => i.record).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const { packed: bytes, ...facts } = await packPart(records);
        const part: BatchPart = { accountId: batch.accountId, day, batch: batch.batch, key: batchPartKey(batch.accountId, day, batch.batch), ...facts };
        return { part, bytes, rollups: rollupDeltas(items), recordsJson: JSON.stringify(records) };
      }),
  );
  const claims = await claimParts(
    deps.d1,
    drafts.map((d) => d.part),
    deps.now(),
  );
  await deps.afterStep?.("claimed", batch);
  const open = drafts.filter((_, i) => !claims[i]!.archived);
  for (const d of open)
    await deps.bucket.put(d.part.key, d.bytes, {
      sha256: d.part.sha256,
      httpMetadata: { contentType: "application/gzip" },
      customMetadata: { records: String(d.part.records), account: d.part.accountId, day: d.part.day, batch: d.part.batch },
    });
  await deps.afterStep?.("written", batch);
  if (open.length > 0) await commitParts(deps.d1, open, deps.now());
  await deps.afterStep?.("committed", batch);
  await deps.acknowledge(batch.accountId, batch.batch);
  await deps.afterStep?.("acknowledged", batch);
}

/**
 * The rollup changes of a day's records: each adds itself to its hour × model × key × carrier × API; one
 * that replaces an abandoned record stored earlier also takes that record out again (where it was counted).
 */
export function rollupDeltas(items: ReadonlyArray<{ record: NewGeneration; replaced?: NewGeneration }>): RollupDelta[] {
  const rows = new Map<string, RollupDelta>();
  const add = (r: NewGeneration, sign: 1 | -1) => {
    const dims = [Math.floor(r.createdAt / HOUR_MS) * HOUR_MS, r.model, r.keyHash, r.providerName ?? "", r.inboundApi ?? "chat"] as const;
    const k = JSON.stringify(dims);
    const row = rows.get(k) ?? ([...dims, 0, 0, 0, 0, 0, 0] as RollupDelta);
    const sums = [1, r.tokensPrompt, r.tokensCompletion, r.tokensCached ?? 0, r.tokensCacheWrite ?? 0, r.costNano];
    sums.forEach((v, i) => ((row[5 + i] as number) += sign * v));
    rows.set(k, row);
  };
  for (const { record, replaced } of items) {
    add(record, 1);
    if (replaced) add(replaced, -1);
  }
  return [...rows.values()];
}
