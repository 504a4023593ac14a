import * as z from "zod";
import type { Env } from "../env";
import { ledgerFor } from "../ledger/ledger";
import { countDeadBatch } from "../db/record-parts";
import { logError, logEvent } from "../log-error";
import { storeBatch, type StoreDeps } from "./store-batches";
import type { RecordBatch } from "../ledger/record-batch";
import type { NewGeneration } from "../db/schema";

/**
 * The records queue's consumers (wrangler.toml): `switchyard-records` stores the ledgers' record batches
 * (src/generations/store-batches.ts); `switchyard-records-dead` counts the batches it gave up on. A message
 * is a `RecordBatch` as the ledger sent it, checked here before anything is written.
 */
const recordBatchSchema = z.object({
  v: z.literal(1),
  accountId: z.string().min(1).max(100),
  batch: z.string().min(3).max(200),
  items: z
    .array(z.object({ record: z.string().min(2), abandoned: z.literal(true).optional(), replaced: z.string().min(2).optional() }))
    .min(1)
    .max(10_000),
});

/** The Worker's store: its D1, its R2 bucket, each account's ledger. */
export function storeDeps(env: Env): StoreDeps {
  return {
    d1: env.DB,
    bucket: env.ARCHIVE,
    acknowledge: (accountId, batch) => ledgerFor(env, accountId).recordsStored(batch),
    now: Date.now,
  };
}

/**
 * Stores each message's batch; a message that fails is retried by the queue (and after its retries goes
 * to the dead letters), the others are acknowledged. One that is not a batch at all can never be stored:
 * it is retried too, so that it ends among the dead letters, seen, rather than dropped.
 */
export async function consumeRecordBatches(
  messages: MessageBatch<unknown>,
  deps: StoreDeps,
  exportTraces?: (accountId: string, records: NewGeneration[]) => Promise<void>,
): Promise<void> {
  await Promise.all(
    messages.messages.map(async (m) => {
      try {
        const batch = recordBatchSchema.parse(m.body) as RecordBatch;
        await storeBatch(deps, batch);
        // Stored: the account's observability destinations get their spans (it never throws: records come first).
        await exportTraces?.(
          batch.accountId,
          batch.items.map((i) => JSON.parse(i.record) as NewGeneration),
        );
        m.ack();
      } catch (err) {
        logError("records store: a batch failed; the queue retries it", err, { attempts: m.attempts });
        m.retry({ delaySeconds: Math.min(60, 2 * m.attempts) });
      }
    }),
  );
}

/** Dead letters: each batch counted (the admin's storage and audit show it); its records wait in the ledger, which sends them again. */
export async function consumeDeadRecordBatches(messages: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const m of messages.messages) {
    const parsed = recordBatchSchema.safeParse(m.body);
    const batch = parsed.success ? parsed.data : { accountId: "unknown", batch: `unreadable:${m.id}`, items: [] };
    await countDeadBatch(env.DB, batch.accountId, batch.batch, batch.items.length, Date.now());
    logEvent("records store: a batch is a dead letter", { account: batch.accountId, batch: batch.batch, records: batch.items.length });
    m.ack();
  }
}
