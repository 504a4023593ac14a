/**
 * A batch of generation records on its way from an account's ledger to the records store (the
 * `RECORDS_QUEUE` message): its id (`<account>:<n>`, the ledger's batch number, the same every time the
 * batch is sent) and its records as the ledger stored them (JSON text).
 */
export type RecordItem = {
  record: string;
  /** The record the ledger wrote when the request's hold expired (it died without settling): a settle may replace it. */
  abandoned?: true;
  /**
   * A settle that arrived after its request's abandoned record had been batched: it takes that record's
   * place, and this is that abandoned record (JSON text), so the store can take its sums out again.
   */
  replaced?: string;
};

export type RecordBatch = { v: 1; accountId: string; batch: string; items: RecordItem[] };

/**
 * A batch's number: of two stored versions of one record, the one from the later batch is current. Ledger
 * batches are `<account>:<n>` (n never goes back); a merge of several parts is `<account>:c<digest>-<n>`,
 * n the largest it merged.
 */
export function batchSeq(batch: string): number {
  const tail = batch.slice(batch.lastIndexOf(":") + 1);
  return Number(tail.slice(tail.lastIndexOf("-") + 1));
}
