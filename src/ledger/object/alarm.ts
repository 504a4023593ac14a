import type { RecordBatch } from "../record-batch";
import { logError } from "../../log-error";
import { sendGroups } from "../send-groups";
import { expire, nextExpiry } from "./expiry";
import { RETENTION_MS, type LedgerDb } from "./ledger-db";
import type { AlertMessage } from "../../alerts/events";
import { markAlertsSent, pruneAlerts, unsentAlerts } from "./alerts";

/** How often old debit ids are pruned: a scan of the whole table, so not on every flush. */
const PRUNE_EVERY_MS = 3600_000;
/** Fired alerts handed to the alerts queue per alarm (a sendBatch takes at most 100 messages). */
const ALERTS_PER_SEND = 100;
/** When the alerts queue refused a send, the alarm tries again this much later. */
const ALERTS_RETRY_MS = 30_000;

/**
 * The ledger object's alarm: when it is due, and what it does when it fires. One per object; it remembers
 * the alarm it set (to skip redundant storage writes) and when it last pruned.
 */
export class LedgerAlarm {
  /** When the stored alarm fires (ms epoch), null when none is set; mirrors storage (the object loads it on start). */
  at: number | null = null;
  /** When this instance last pruned old debit ids (ms epoch); 0 = not yet. */
  private prunedAt = 0;

  constructor(private readonly setAlarm: (at: number) => unknown) {}

  /** Makes the alarm fire no later than `inMs` from now (an earlier one already set stands). */
  schedule(inMs: number): void {
    const at = Date.now() + inMs;
    if (this.at !== null && this.at <= at) return;
    this.at = at;
    void this.setAlarm(at);
  }

  /**
   * Batches the outbox's records when they are due (the account's flush delay after the oldest settled:
   * record-batches.ts) and sends the batches to the records queue (given their ids first, so a batch sent
   * again is the same batch), sends again a batch not acknowledged within RECORDS_ACK_TIMEOUT_MS, expires
   * what dead isolates left, prunes old ids; reschedules while work remains.
   */
  async fire(db: LedgerDb, queue: Queue<RecordBatch>, alertsQueue?: Queue<AlertMessage>): Promise<void> {
    const { sql, outbox, timings } = db;
    this.at = null;
    const now = db.now();
    expire(db, now);
    // Budget alerts the settles fired (written in their transactions): to the alerts queue, which delivers them.
    // (No queue: a test of the records' side; the alerts wait here.)
    if (alertsQueue && !(await sendAlerts(sql, alertsQueue, now))) this.schedule(ALERTS_RETRY_MS);
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      pruneAlerts(sql, now);
      outbox.prune(now, now - RETENTION_MS); // debits (their records stored) and abandoned ids
      outbox.dropStoredRecords(timings.recordsKeepBytes);
      sql.exec("DELETE FROM slice_audit WHERE ended_at < ?", now - RETENTION_MS);
      this.prunedAt = now;
    }
    // Not before they are due: an alarm that fires for an expiry or a resend leaves a quiet account's records gathering.
    const flushAt = outbox.flushAt(timings);
    if (flushAt !== null && flushAt <= now) outbox.assign(timings.flushMaxRecords, timings);
    const due = outbox.due(now - timings.recordsAckTimeoutMs);
    const { sent, failed } = await sendBatches(queue, due);
    outbox.markSent(sent, now);
    if (failed > 0) {
      // Nothing is lost: those batches stay here, assigned, and go again. Not at once: a batch the queue
      // refuses whatever happens (one too large) would otherwise be sent every second; it stays pending, seen in the audit.
      this.schedule(timings.recordsAckTimeoutMs);
      return;
    }
    const next = outbox.next(timings.recordsAckTimeoutMs);
    const at = [nextExpiry(db), next.resendAt].filter((t) => t > 0);
    const waiting = outbox.flushAt(timings); // records still gathering, or more than one alarm sends
    if (waiting !== null) at.push(waiting);
    if (next.unsent) at.push(now);
    if (at.length) this.schedule(Math.max(0, Math.min(...at) - now));
  }
}

/** Hands the fired alerts not yet sent to the alerts queue; false when the queue refused (they stay, and go again). */
async function sendAlerts(sql: SqlStorage, queue: Queue<AlertMessage>, now: number): Promise<boolean> {
  for (;;) {
    const unsent = unsentAlerts(sql, ALERTS_PER_SEND);
    if (unsent.length === 0) return true;
    try {
      await queue.sendBatch(unsent.map(({ event }) => ({ body: { v: 1 as const, kind: "event" as const, event } })));
    } catch (err) {
      logError("alerts queue: fired alerts could not be sent; they go again", err, { alerts: unsent.length });
      return false;
    }
    markAlertsSent(
      sql,
      unsent.map((a) => a.id),
      now,
    );
    if (unsent.length < ALERTS_PER_SEND) return true;
  }
}

/**
 * The batches to the records queue, as few `sendBatch` calls as its limits allow; a call that fails is
 * tried again batch by batch, so one batch the queue refuses holds back no other. Returns the batches sent
 * and how many were not (each logged).
 */
async function sendBatches(queue: Queue<RecordBatch>, batches: RecordBatch[]): Promise<{ sent: string[]; failed: number }> {
  const sent: string[] = [];
  let failed = 0;
  for (const g of sendGroups(batches)) {
    try {
      await queue.sendBatch(g.map((body) => ({ body })));
      sent.push(...g.map((b) => b.batch));
    } catch {
      for (const b of g)
        try {
          await queue.send(b);
          sent.push(b.batch);
        } catch (err) {
          failed++;
          logError("records queue: a batch could not be sent; it goes again", err, { batch: b.batch, records: b.items.length });
        }
    }
  }
  return { sent, failed };
}
