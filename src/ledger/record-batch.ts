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
