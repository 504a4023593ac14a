import type { NewGeneration } from "../db/schema";
import { logError, logEvent } from "../log-error";
import { findDestination, logDelivery, resealDestination } from "./destination-store";
import { openSecrets, sealSecrets } from "./destination-secrets";
import type { SecretBox } from "../webhooks/secret-box";
import { exportSpans, keyLabels, type ExportDeps } from "./export-spans";
import { traceMessageSchema } from "./traces-queue";

/**
 * What the traces consumers need: D1 (destinations, key labels, the delivery log), what an export needs, the
 * log's bound, and the box that opens destinations' secrets (null without REASONING_SEAL_KEY).
 */
export type TraceConsumerDeps = ExportDeps & { d1: D1Database; logRows: number; box: SecretBox | null };

/** The delay before a message's next attempt: 5 s doubling per attempt, at most 10 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(600, 5 * 2 ** Math.max(0, attempts - 1));
}

/**
 * `switchyard-traces`: each message's records exported to its destination, the attempt written to the
 * account's delivery log. A destination deleted or turned off since is skipped; one that answers 429 or 5xx,
 * or does not answer in time, is tried again with backoff (wrangler.toml's max_retries, then the dead
 * letters); a message that is not one is dropped, logged.
 */
export async function consumeTraces(messages: MessageBatch<unknown>, deps: TraceConsumerDeps): Promise<void> {
  for (const m of messages.messages) {
    const parsed = traceMessageSchema.safeParse(m.body);
    if (!parsed.success) {
      logError("traces: a message is not a trace export; dropped", parsed.error, { id: m.id });
      m.ack();
      continue;
    }
    const msg = parsed.data;
    try {
      const d = await findDestination(deps.d1, msg.accountId, msg.destinationId);
      if (!d || !d.enabled) {
        m.ack();
        continue;
      }
      const records = msg.records.map((r) => JSON.parse(r) as NewGeneration);
      const secrets = await openSecrets(deps.box, d);
      if (!secrets) {
        // No key opens them (the sealing key was dropped, or the row is not this destination's): no retry changes that.
        logEvent("traces: a destination's secrets do not open; its export failed", { account: msg.accountId, destination: d.id });
        await logDelivery(
          deps.d1,
          { accountId: msg.accountId, destinationId: d.id, at: deps.now(), spans: records.length, attempt: m.attempts, status: 0, outcome: "failed" },
          deps.logRows,
        );
        m.ack();
        continue;
      }
      // A row written before sealing: sealed now that it is read.
      if (secrets.legacy && deps.box) await resealDestination(deps.d1, d, await sealSecrets(deps.box, d.id, secrets));
      const result = await exportSpans(d, secrets, records, await keyLabels(deps.d1, msg.accountId, records), deps);
      const outcome = result.outcome === "retry" ? "retrying" : result.outcome;
      const row = {
        accountId: msg.accountId,
        destinationId: d.id,
        at: deps.now(),
        spans: records.length,
        attempt: m.attempts,
        status: result.status,
        outcome,
      } as const;
      await logDelivery(deps.d1, row, deps.logRows);
      if (result.outcome === "retry") m.retry({ delaySeconds: retryDelaySeconds(m.attempts) });
      else m.ack();
    } catch (err) {
      logError("traces: an export failed; the queue retries it", err, { attempts: m.attempts });
      m.retry({ delaySeconds: retryDelaySeconds(m.attempts) });
    }
  }
}

/** `switchyard-traces-dead`: exports given up on after every retry, written to the delivery log as `dead`. */
export async function consumeDeadTraces(messages: MessageBatch<unknown>, deps: TraceConsumerDeps): Promise<void> {
  for (const m of messages.messages) {
    const parsed = traceMessageSchema.safeParse(m.body);
    if (parsed.success) {
      const { accountId, destinationId, records } = parsed.data;
      await logDelivery(
        deps.d1,
        { accountId, destinationId, at: deps.now(), spans: records.length, attempt: m.attempts, status: 0, outcome: "dead" },
        deps.logRows,
      );
      logEvent("traces: an export is a dead letter", { account: accountId, destination: destinationId, spans: records.length });
    }
    m.ack();
  }
}
