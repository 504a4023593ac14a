import * as z from "zod";
import type { NewGeneration, ObservabilityDestination } from "../db/schema";
import { logError } from "../log-error";
import { enabledDestinations } from "./destination-store";
import { sampled } from "./sampling";

/**
 * The traces queue's producer side (docs/observability.md): when the records consumer has stored a batch,
 * each enabled destination of the account gets one message with the batch's records it takes — its keys
 * (`api_key_hashes`), its sample (`sampling_rate`, by generation id). Off the request path by construction:
 * it runs in the records consumer, after the records are stored.
 */
export type TraceMessage = { v: 1; accountId: string; destinationId: string; records: string[] };

export const traceMessageSchema = z.object({
  v: z.literal(1),
  accountId: z.string().min(1).max(100),
  destinationId: z.string().min(1).max(100),
  records: z.array(z.string().min(2)).min(1).max(10_000),
});

/** A message stays under the queue's 128 KB with room to spare. */
const MESSAGE_BYTES = 100 * 1024;

export function takes(d: ObservabilityDestination, r: NewGeneration): boolean {
  const keys = d.apiKeyHashes === null ? null : (JSON.parse(d.apiKeyHashes) as string[]);
  return (keys === null || keys.includes(r.keyHash)) && sampled(r.id, d.samplingRate);
}

/** The records each of the account's destinations takes, as messages of at most MESSAGE_BYTES. */
export function traceMessages(accountId: string, destinations: ObservabilityDestination[], records: NewGeneration[]): TraceMessage[] {
  const out: TraceMessage[] = [];
  for (const d of destinations) {
    let chunk: string[] = [];
    let bytes = 0;
    for (const r of records) {
      if (!takes(d, r)) continue;
      const text = JSON.stringify(r);
      if (chunk.length > 0 && bytes + text.length > MESSAGE_BYTES) {
        out.push({ v: 1, accountId, destinationId: d.id, records: chunk });
        chunk = [];
        bytes = 0;
      }
      chunk.push(text);
      bytes += text.length;
    }
    if (chunk.length) out.push({ v: 1, accountId, destinationId: d.id, records: chunk });
  }
  return out;
}

/** A sendBatch takes at most 100 messages and 256 KB in all: messages grouped under both, with room to spare. */
export function sendGroups(messages: TraceMessage[]): TraceMessage[][] {
  const groups: TraceMessage[][] = [];
  let group: TraceMessage[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = m.records.reduce((n, r) => n + r.length, 200);
    if (group.length > 0 && (group.length === 100 || bytes + size > 2 * MESSAGE_BYTES)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(m);
    bytes += size;
  }
  if (group.length) groups.push(group);
  return groups;
}

export type TraceEnqueueDeps = { d1: D1Database; queue: Queue };

/**
 * Enqueues a stored batch's records for the account's destinations. A failure here is logged and swallowed:
 * the records are stored, and a destination (or its queue) must never hold them back.
 */
export async function enqueueTraces(deps: TraceEnqueueDeps, accountId: string, records: NewGeneration[]): Promise<void> {
  try {
    const destinations = await enabledDestinations(deps.d1, accountId);
    if (destinations.length === 0) return;
    const messages = traceMessages(accountId, destinations, records);
    for (const group of sendGroups(messages)) await deps.queue.sendBatch(group.map((body) => ({ body })));
  } catch (err) {
    logError("traces: a stored batch's spans could not be enqueued; they are not exported", err, { account: accountId });
  }
}
