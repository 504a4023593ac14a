import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { NewGeneration } from "../db/schema";
import type * as C from "./contract";
import { RecordsOutbox } from "./records-outbox";
import { migrateLedger } from "./ledger-sql";
import { ledgerTimings } from "./ledger-config";
import type { LedgerDb } from "./object/ledger-db";
import { LedgerAlarm } from "./object/alarm";
import { admit, lease, renew } from "./object/holds";
import { settleBatch } from "./object/settles";
import { findGrant, grant, grantsSummary, reverse } from "./object/grants";
import { totals } from "./object/balance";
import { keysUsage, keyUsage, openHolds, sliceAudit } from "./object/reads";
import { alertRules, alertsFired, setAlertThresholds } from "./object/alerts";
import type { AlertRules, FiredAlert } from "../alerts/events";

/**
 * The balance ledger of one account. Every admission and debit of the account runs here, one at a
 * time, so parallel requests never lose or double-count a debit. Each method body is synchronous
 * SQL, hence atomic; `settleBatch` is idempotent on the generation id. The object is a front: it reads
 * its settings once, migrates its SQLite, and hands each call to the module of its concern (src/ledger/object/:
 * holds, settles, grants, reads, the alarm), which works on the `LedgerDb` built here.
 */
export class LedgerObject extends DurableObject<Env> implements C.LedgerRpc {
  /** The time source: the wall clock; tests replace it to play minutes in milliseconds. */
  clock: () => number = Date.now;
  private readonly db: LedgerDb;
  private readonly alarms: LedgerAlarm;
  /** Generation records waiting for the records store (src/ledger/records-outbox.ts). */
  private readonly outbox: RecordsOutbox;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const { storage } = ctx;
    migrateLedger(storage.sql);
    const alarms = new LedgerAlarm((at) => storage.setAlarm(at));
    this.alarms = alarms;
    this.outbox = new RecordsOutbox(storage.sql);
    this.db = {
      sql: storage.sql,
      transaction: (fn) => storage.transactionSync(fn),
      now: () => this.clock(),
      timings: ledgerTimings(env),
      outbox: this.outbox,
      scheduleAlarm: (inMs) => alarms.schedule(inMs),
    };
    void ctx.blockConcurrencyWhile(async () => {
      alarms.at = await storage.getAlarm();
    });
  }

  admit(req: C.AdmitRequest): C.AdmitResult {
    return admit(this.db, req);
  }
  lease(req: C.LeaseRequest): C.LeaseResult {
    return lease(this.db, req);
  }
  renew(req: C.RenewRequest): C.RenewResult {
    return renew(this.db, req);
  }
  settleBatch(items: C.SettleRequest[], slices: C.SliceReport[] = []): number {
    return settleBatch(this.db, items, slices);
  }
  grant(req: C.GrantRequest): C.GrantResult {
    return grant(this.db, req);
  }
  reverse(req: C.ReverseRequest): C.ReverseResult {
    return reverse(this.db, req);
  }
  grantsSummary(): C.GrantsSummary {
    return grantsSummary(this.db.sql);
  }
  findGrant(grantId: string): C.GrantRecord | null {
    return findGrant(this.db.sql, grantId);
  }
  totals(): C.Totals {
    return totals(this.db.sql);
  }
  keyUsage(keyHash: string): C.KeyUsage {
    return keyUsage(this.db.sql, keyHash, this.clock());
  }
  keysUsage(keyHashes: string[]): Record<string, C.KeyUsage> {
    return keysUsage(this.db.sql, keyHashes, this.clock());
  }
  openHolds(limit = 100): C.OpenHold[] {
    return openHolds(this.db.sql, limit);
  }
  sliceAudit(): C.SliceAudit {
    return sliceAudit(this.db.sql);
  }
  pendingGeneration(genId: string): NewGeneration | null {
    return this.outbox.pending(genId);
  }
  pendingRecords(limit: number): NewGeneration[] {
    return this.outbox.newestPending(limit);
  }
  recordsStored(batch: string): number {
    return this.outbox.stored(batch);
  }
  outboxSize(): number {
    return this.outbox.size();
  }
  /** Sends every batch still waiting for the store again now, rather than at its ack timeout (an operator's replay of dead letters). */
  resendRecords(): number {
    const batches = this.outbox.resendAll();
    if (batches > 0) this.alarms.schedule(0);
    return batches;
  }

  alertRules(): AlertRules {
    return alertRules(this.db.sql);
  }
  setAlertThresholds(keyHash: string | null, thresholds: number[]): void {
    setAlertThresholds(this.db.sql, keyHash, thresholds, this.clock());
  }
  alertsFired(limit: number): FiredAlert[] {
    return alertsFired(this.db.sql, limit);
  }

  override alarm(): Promise<void> {
    return this.alarms.fire(this.db, this.env.RECORDS_QUEUE, this.env.ALERTS_QUEUE);
  }
}
