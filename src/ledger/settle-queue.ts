import * as z from "zod";
import type { Env } from "../env";
import type { NewGeneration } from "../db/schema";
import type { SettleRequest, SliceReport } from "./contract";
import { ledgerFor } from "./ledger";
import { sendGroups } from "./send-groups";
import { logError, logEvent } from "../log-error";

/**
 * The settle queue (`SETTLE_QUEUE`): settle batches an isolate could not store in the account's ledger
 * within its retry budget. The consumer stores them with the same idempotent `settleBatch`, so a
 * message delivered twice, or a batch that did reach the ledger before its reply was lost, debits once.
 * Message order does not matter to the ledger (docs/storage.md).
 */
export type SettleMessage = { v: 1; accountId: string; items: SettleRequest[]; slices: SliceReport[] };

const nano = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const settleMessageSchema = z.object({
  v: z.literal(1),
  accountId: z.string().min(1).max(100),
  items: z.array(
    z.object({
      genId: z.string().min(1).max(100),
      keyHash: z.string().max(100),
      costNano: nano,
      record: z.looseObject({ id: z.string() }).transform((r) => r as unknown as NewGeneration),
      leaseId: z.string().max(100).optional(),
      releaseFreeSlot: z.boolean().optional(),
      keyLimit: z.object({ nano, reset: z.enum(["daily", "weekly", "monthly"]).nullable(), includeByok: z.literal(true).optional() }).optional(),
      byok: z.literal(true).optional(),
    }),
  ),
  slices: z.array(z.object({ leaseId: z.string().min(1).max(100), admitted: nano, release: z.boolean().optional(), returnedNano: nano.optional() })),
});

/** Queues take messages of up to 128 KB and sendBatch calls of up to 100 messages and 256 KB. */
const MAX_MESSAGE_BYTES = 100 * 1024;
/** The consumer's attempts before a message goes to the dead-letter queue (wrangler.toml `max_retries`). */
export const SETTLE_QUEUE_MAX_RETRIES = 100;

/** Splits a batch into messages under the size limit; slice reports ride with the last one. */
export function settleMessages(accountId: string, items: SettleRequest[], slices: SliceReport[]): SettleMessage[] {
  const messages: SettleMessage[] = [];
  let current: SettleRequest[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = JSON.stringify(item).length * 3; // UTF-8 worst case
    if (current.length > 0 && bytes + size > MAX_MESSAGE_BYTES) {
      messages.push({ v: 1, accountId, items: current, slices: [] });
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  messages.push({ v: 1, accountId, items: current, slices });
  return messages;
}

/** What the settle batcher hands a batch to when the ledger stayed unreachable. */
export type SettleQueueSender = (accountId: string, items: SettleRequest[], slices: SliceReport[]) => Promise<void>;

export function queueSender(queue: Queue<SettleMessage>): SettleQueueSender {
  return async (accountId, items, slices) => {
    for (const group of sendGroups(settleMessages(accountId, items, slices))) await queue.sendBatch(group.map((body) => ({ body })));
  };
}

/** What may be logged of settles that could not be stored: ids and amounts, never keys or content. */
export function settleSummary(accountId: string, items: SettleRequest[]): string {
  return JSON.stringify({ account: accountId, settles: items.map((i) => ({ gen: i.genId, cost_nano: i.costNano })) });
}

/**
 * The queue consumer: one `settleBatch` per account per delivery. A failure retries the messages with a
 * growing delay; the last attempt logs what it carries before the queue moves it to the dead-letter queue.
 */
export async function consumeSettles(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byAccount = new Map<string, Array<{ message: Message<unknown>; body: SettleMessage }>>();
  for (const message of batch.messages) {
    const parsed = settleMessageSchema.safeParse(message.body);
    if (!parsed.success) {
      // Never applied, never dropped: after its retries the queue keeps it in the dead-letter queue.
      logEvent("settle queue: a message of unknown shape", { message: message.id });
      message.retry({ delaySeconds: 300 });
      continue;
    }
    const body = parsed.data;
    byAccount.set(body.accountId, [...(byAccount.get(body.accountId) ?? []), { message, body }]);
  }
  await Promise.all(
    [...byAccount].map(async ([accountId, group]) => {
      try {
        await ledgerFor(env, accountId).settleBatch(
          group.flatMap((g) => g.body.items),
          group.flatMap((g) => g.body.slices),
        );
        for (const g of group) g.message.ack();
      } catch (err) {
        for (const { message, body } of group) {
          if (message.attempts >= SETTLE_QUEUE_MAX_RETRIES)
            logEvent("settle queue: giving up to the dead-letter queue", { detail: settleSummary(accountId, body.items) });
          message.retry({ delaySeconds: Math.min(300, 5 * message.attempts) });
        }
        logError("settle queue: the ledger refused a batch", err, { account: accountId });
      }
    }),
  );
}
