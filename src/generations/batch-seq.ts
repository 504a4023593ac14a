/**
 * A batch's number: of two stored versions of one record, the one from the later batch is current. Ledger
 * batches are `<account>:<n>` (n never goes back); a merge of several parts is `<account>:c<digest>-<n>`,
 * n the largest it merged.
 */
export function batchSeq(batch: string): number {
  const tail = batch.slice(batch.lastIndexOf(":") + 1);
  return Number(tail.slice(tail.lastIndexOf("-") + 1));
}
