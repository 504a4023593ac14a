import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { NewGeneration } from "../db/schema";
import type {
  AdmitRequest,
  AdmitResult,
  AdmitRoute,
  EndedSlice,
  GrantRecord,
  GrantRequest,
  GrantResult,
  GrantsSummary,
  KeyUsage,
  LeaseRequest,
  LeaseResult,
  LedgerRpc,
  OpenHold,
  RenewRequest,
  RenewResult,
  ReverseRequest,
  ReverseResult,
  SettleRequest,
  SliceAudit,
  SliceReport,
  Totals,
} from "./contract";
import { RecordsOutbox } from "./records-outbox";
import { sendGroups } from "./send-groups";
import type { RecordBatch } from "../generations/record-batch";
import { logError } from "../log-error";
import { migrateLedger } from "./ledger-sql";
import { ledgerTimings, type LedgerTimings } from "./ledger-config";
import { utcDay, windowEnd, windowStart, windowStarts } from "../keys/usage-windows";
import type { FreeLimitHit, FreeLimits } from "./free-limits";

/** Bound parameters per SQL statement (SQLite in Durable Objects allows 100). */
const MAX_BOUND_PARAMS = 100;
/** Settled debit ids (and ended-slice audit rows) kept this long. */
const RETENTION_MS = 7 * 24 * 3600_000;
/** How often old debit ids are pruned: a scan of the whole table, so not on every flush. */
const PRUNE_EVERY_MS = 3600_000;
/** Audit rows listed by `audit()`. */
const AUDIT_ROWS = 50;

/**
 * The balance ledger of one account. Every admission and debit of the account runs here, one at a
 * time, so parallel requests never lose or double-count a debit. Each method body is synchronous
 * SQL, hence atomic; `settleBatch` is idempotent on the generation id.
 */
export class LedgerObject extends DurableObject<Env> implements LedgerRpc {
  private readonly sql: SqlStorage;
  private readonly timings: LedgerTimings;
  /** When the stored alarm fires (ms epoch), null when none is set; mirrors storage to skip redundant writes. */
  private alarmAt: number | null = null;
  /** When this instance last pruned old debit ids (ms epoch); 0 = not yet. */
  private prunedAt = 0;
  /** The time source: the wall clock; tests replace it to play minutes in milliseconds. */
  clock: () => number = Date.now;
  /** Generation records waiting for the records store (src/ledger/records-outbox.ts). */
  private readonly outbox: RecordsOutbox;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.timings = ledgerTimings(env);
    migrateLedger(this.sql);
    this.outbox = new RecordsOutbox(this.sql);
    void ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * Admits a request when its key's remaining limit and the balance can pay at least its least hold
   * (`minHoldNano`): it holds what it may cost as it stands, or as much as can be paid (docs/money.md,
   * Admission). Refused otherwise, saying which of the two is short and by how much could be paid.
   */
  admit(req: AdmitRequest): AdmitResult {
    if (req.settle) this.settleBatch(req.settle.items, req.settle.slices);
    let keyRoom = Infinity;
    if (req.limitNano !== null) {
      // Holds and unseen costs count against the current window: they will settle into it (or a later one).
      const from = windowStart(req.limitReset ?? null, this.clock());
      const used =
        this.keyUsageNano(req.keyHash, from) +
        this.one("SELECT COALESCE(SUM(amount_nano),0) AS v FROM holds WHERE key_hash = ?", req.keyHash) +
        (req.unseenNano ?? 0);
      if (used >= req.limitNano) return { ok: false, reason: "key_limit", availableNano: 0 };
      keyRoom = req.limitNano - used;
    }
    const now = this.clock();
    const available = this.available();
    const room = Math.min(keyRoom, available);
    const least = Math.min(req.minHoldNano ?? req.holdNano, req.holdNano);
    const canPay = req.paid && room > 0 && room >= least;
    const granted = canPay ? Math.min(req.holdNano, room) : 0;
    let route: AdmitRoute | undefined;
    if (req.free) {
      // A plan with a free endpoint takes a free slot; without one left, only its priced endpoints may serve.
      const hit = this.countFree(req.free, now, req.genId);
      if (hit && !canPay) return { ok: false, reason: "rate_limit", ...hit };
      if (hit) route = "paid_only";
      else if (req.paid && !canPay) route = "free_only";
    } else if (req.paid && !canPay)
      return keyRoom < least
        ? { ok: false, reason: "key_limit", availableNano: room }
        : { ok: false, reason: "balance", availableNano: room, heldNano: this.heldNano() };
    const holdNano = route === "free_only" ? 0 : granted;
    // Every admitted request has a row, free ones too: should it die, its record says so.
    this.sql.exec(
      "INSERT OR IGNORE INTO holds (gen_id, key_hash, amount_nano, created_at, renewed_at, record) VALUES (?, ?, ?, ?, ?, ?)",
      req.genId,
      req.keyHash,
      holdNano,
      now,
      now,
      JSON.stringify(req.abandoned),
    );
    this.scheduleAlarm(this.timings.holdTtlMs);
    return route ? { ok: true, route, holdNano } : { ok: true, holdNano };
  }

  /**
   * Counts a free request against the account's limits, or says which one it would exceed (then it is
   * not counted): a sliding minute (the oldest of the last minute's admissions frees the next slot) and
   * the UTC day, whose limit depends on the credits ever granted to the account.
   */
  private countFree(limits: FreeLimits, now: number, genId: string): FreeLimitHit | null {
    const hit = (window: FreeLimitHit["window"], limit: number, resetAt: number): FreeLimitHit => ({
      window,
      limit,
      resetAt,
      retryAfterS: Math.max(1, Math.ceil((resetAt - now) / 1000)),
    });
    this.sql.exec("DELETE FROM free_minute WHERE at <= ?", now - 60_000);
    const inMinute = this.one("SELECT COUNT(*) AS v FROM free_minute");
    if (inMinute >= limits.perMinute) {
      // A slot frees when enough of the oldest leave the window to go below the limit (it may have been lowered).
      const freeing = this.one("SELECT at AS v FROM free_minute ORDER BY at LIMIT 1 OFFSET ?", inMinute - limits.perMinute);
      return hit("minute", limits.perMinute, freeing + 60_000);
    }
    const day = utcDay(now);
    // credits_nano is the sum of the grants (kept so by grant()), one row to read.
    const perDay = this.one("SELECT credits_nano AS v FROM account WHERE id = 1") >= limits.boughtNano ? limits.perDayBought : limits.perDay;
    const today = this.sql.exec<{ count: number }>("SELECT count FROM free_days WHERE day = ?", day).toArray()[0]?.count ?? 0;
    if (today >= perDay) return hit("day", perDay, windowEnd("daily", now)!);
    this.sql.exec("INSERT INTO free_minute (at, gen_id) VALUES (?, ?)", now, genId);
    this.sql.exec("INSERT INTO free_days (day, count) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET count = count + 1", day);
    this.sql.exec("DELETE FROM free_days WHERE day < ?", utcDay(now - RETENTION_MS));
    return null;
  }

  /** Gives back the free slot a request's admission counted (a priced endpoint served it): its minute row and its day's count. */
  private releaseFree(genId: string, admittedAt: number): void {
    this.sql.exec("DELETE FROM free_minute WHERE gen_id = ?", genId);
    this.sql.exec("UPDATE free_days SET count = count - 1 WHERE day = ? AND count > 0", utcDay(admittedAt));
  }

  /**
   * Grants an isolate a slice of the balance to admit requests locally (no round trip per request).
   * Refused when what is available cannot pay the asking request's whole hold (that request then asks
   * `admit`, which may grant it less); otherwise at least that hold and at most half of what is
   * available. A free model's request (hold 0) always gets a slice, of nothing when nothing is
   * available: its admissions are still counted.
   */
  lease(req: LeaseRequest): LeaseResult {
    if (req.settle) this.settleBatch(req.settle.items, req.settle.slices);
    const available = this.available();
    if (req.holdNano > 0 && (available <= 0 || available < req.holdNano)) return { ok: false, reason: "balance", availableNano: available };
    // At most half of what is available, so other isolates of the account still find money.
    const share = available > 0 ? Math.min(req.wantNano, Math.ceil(available / 2)) : 0;
    const grantNano = Math.max(req.holdNano, share);
    const now = this.clock();
    this.sql.exec("INSERT INTO slices (lease_id, amount_nano, created_at, renewed_at) VALUES (?, ?, ?, ?)", req.leaseId, grantNano, now, now);
    this.scheduleAlarm(this.timings.leaseTtlMs);
    return { ok: true, grantNano };
  }

  /** Keeps the slices and holds of running requests alive (and records how many requests each slice admitted). */
  renew(req: RenewRequest): RenewResult {
    const now = this.clock();
    const gone: string[] = [];
    this.ctx.storage.transactionSync(() => {
      for (const s of req.slices) {
        const found = this.sql
          .exec(
            "UPDATE slices SET renewed_at = ?, admitted = MAX(admitted, ?) WHERE lease_id = ? AND released_at IS NULL RETURNING lease_id",
            now,
            s.admitted,
            s.leaseId,
          )
          .toArray();
        if (found.length === 0) gone.push(s.leaseId);
      }
      for (const id of req.holds) {
        const found = this.sql.exec("UPDATE holds SET renewed_at = ? WHERE gen_id = ? RETURNING gen_id", now, id).toArray();
        if (found.length === 0) gone.push(id);
      }
    });
    return { gone };
  }

  /**
   * Debits each request's cost and stores its record, exactly once per generation id, in one
   * transaction; takes in the isolate's slice reports and deletes released slices whose admitted
   * requests have all settled (their unspent rest returns to the balance). Returns how many requests
   * this call applied (a retried batch applies none twice). A handful of statements per batch: the
   * debits insert tells which ids are new, and usage, key usage and slice spending are summed first.
   * Order-independent: a release that arrives before some of its slice's settles keeps the slice
   * (and its money held) until they arrive.
   */
  settleBatch(items: SettleRequest[], slices: SliceReport[] = []): number {
    let applied = 0;
    this.ctx.storage.transactionSync(() => {
      const now = this.clock();
      // When each request giving back a free slot was admitted (its hold row, read before it goes).
      const admittedAt = new Map<string, number>();
      for (const i of items)
        if (i.releaseFreeSlot)
          admittedAt.set(
            i.genId,
            this.sql.exec<{ at: number }>("SELECT created_at AS at FROM holds WHERE gen_id = ?", i.genId).toArray()[0]?.at ?? i.record.createdAt,
          );
      // A request admitted on its own hold releases it, applied or not (a retry finds it gone).
      this.execChunked(
        "DELETE FROM holds WHERE gen_id IN ($)",
        items.filter((i) => !i.leaseId).map((i) => [i.genId]),
      );
      const fresh = this.insertDebits(items, now);
      const settled = items.filter((i) => fresh.delete(i.genId)); // once each, even if listed twice
      applied = settled.length;
      for (const i of settled) if (i.releaseFreeSlot) this.releaseFree(i.genId, admittedAt.get(i.genId)!);
      const usage = sumBy(settled, (i) => i.keyHash);
      const total = [...usage.values()].reduce((a, b) => a + b, 0);
      if (total > 0) this.sql.exec("UPDATE account SET usage_nano = usage_nano + ? WHERE id = 1", total);
      const day = utcDay(now);
      for (const [keyHash, nano] of usage)
        if (nano > 0)
          this.sql.exec(
            "INSERT INTO key_usage (key_hash, day, usage_nano) VALUES (?, ?, ?) ON CONFLICT (key_hash, day) DO UPDATE SET usage_nano = usage_nano + excluded.usage_nano",
            keyHash,
            day,
            nano,
          );
      // What leased requests spent leaves their slice's hold and becomes usage; each counts as settled there.
      for (const [leaseId, { nano, count }] of perLease(settled)) {
        const found = this.sql
          .exec("UPDATE slices SET amount_nano = MAX(0, amount_nano - ?), settled = settled + ? WHERE lease_id = ? RETURNING lease_id", nano, count, leaseId)
          .toArray();
        if (found.length === 0) this.sql.exec("UPDATE slice_audit SET settled = settled + ? WHERE lease_id = ?", count, leaseId); // a late settle of an ended slice
      }
      // A late settle supersedes the "abandoned" record an expired hold left.
      this.outbox.addSettled(settled);
      for (const s of slices) {
        // A rest given back leaves the slice once however often it is reported (SET reads the row as it was).
        const returned = s.returnedNano ?? 0;
        const found = this.sql
          .exec(
            "UPDATE slices SET admitted = MAX(admitted, ?), renewed_at = ?, released_at = CASE WHEN ? THEN COALESCE(released_at, ?) ELSE released_at END, " +
              "amount_nano = MAX(0, amount_nano - MAX(0, ? - returned_nano)), returned_nano = MAX(returned_nano, ?) WHERE lease_id = ? RETURNING lease_id",
            s.admitted,
            now,
            s.release ? 1 : 0,
            now,
            returned,
            returned,
            s.leaseId,
          )
          .toArray();
        if (found.length === 0) this.sql.exec("UPDATE slice_audit SET admitted = MAX(admitted, ?) WHERE lease_id = ?", s.admitted, s.leaseId);
      }
      if (slices.some((s) => s.release) || perLease(settled).size > 0)
        this.sql.exec("DELETE FROM slices WHERE released_at IS NOT NULL AND settled >= admitted");
    });
    this.scheduleAlarm(this.timings.flushDelayMs);
    return applied;
  }

  /** Inserts the debits not seen before; returns their generation ids. */
  private insertDebits(items: SettleRequest[], now: number): Set<string> {
    const fresh = new Set<string>();
    const rows = items.map((i) => [i.genId, i.keyHash, i.costNano, now]);
    this.execChunked("INSERT OR IGNORE INTO debits (gen_id, key_hash, cost_nano, settled_at) VALUES $ RETURNING gen_id", rows, (r) =>
      fresh.add(r.gen_id as string),
    );
    return fresh;
  }

  /**
   * Runs a statement over many rows, as few times as SQLite's bound-parameter limit allows: `$` becomes
   * `(?, ?), (?, ?)…` for rows of several values, or `?, ?…` for rows of one.
   */
  private execChunked(query: string, rows: unknown[][], onRow?: (row: Record<string, SqlStorageValue>) => void): void {
    if (rows.length === 0) return;
    const width = rows[0]!.length;
    const per = Math.max(1, Math.floor(MAX_BOUND_PARAMS / width));
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per);
      const tuple = width === 1 ? "?" : `(${Array(width).fill("?").join(", ")})`;
      const cursor = this.sql.exec(query.replace("$", Array(chunk.length).fill(tuple).join(", ")), ...chunk.flat());
      for (const row of cursor) onRow?.(row);
    }
  }

  /**
   * Adds credits once per grant id: a repeated grant (a retried command, a resubmitted payment) changes
   * nothing and says so. Credits are always the sum of the grants table.
   */
  grant(req: GrantRequest): GrantResult {
    const { grantId, amountNano, source } = req;
    if (!Number.isSafeInteger(amountNano) || amountNano <= 0) throw new RangeError("grant must be a positive whole number of nano-USD");
    if (typeof grantId !== "string" || grantId.length < 1 || grantId.length > 200) throw new RangeError("grant id must be 1 to 200 characters");
    let applied = false;
    this.ctx.storage.transactionSync(() => {
      applied =
        this.sql
          .exec(
            "INSERT OR IGNORE INTO grants (grant_id, amount_nano, source, created_at) VALUES (?, ?, ?, ?) RETURNING grant_id",
            grantId,
            amountNano,
            source,
            this.clock(),
          )
          .toArray().length === 1;
      if (applied) this.sql.exec("UPDATE account SET credits_nano = credits_nano + ?, granted = 1 WHERE id = 1", amountNano);
    });
    return { applied, totals: this.totals() };
  }

  /**
   * Sets what is taken back of a grant (a payment's refunds and withheld disputes) to a total, raised or
   * lowered, at most the grant: one reversal row per grant, so the credits are the grant minus what its
   * charge's state says now, whatever order the events came in. Each figure carries when its state was
   * read; one read earlier than the stored figure's is stale and changes nothing (two events processed at
   * once cannot leave the older reading last). Idempotent: the same ask again changes nothing. The balance
   * may go below zero when the credits were spent already (docs/payments.md).
   */
  reverse(req: ReverseRequest): ReverseResult {
    const { grantId, amountNano, observedAt, source } = req;
    if (!Number.isSafeInteger(amountNano) || amountNano < 0) throw new RangeError("reversal must be a whole number of nano-USD ≥ 0");
    if (!Number.isSafeInteger(observedAt) || observedAt < 0) throw new RangeError("observedAt must be a time in Unix ms");
    let changeNano = 0;
    let reversedNano = 0;
    let stale = false;
    this.ctx.storage.transactionSync(() => {
      const granted = this.sql.exec<{ amount_nano: number }>("SELECT amount_nano FROM grants WHERE grant_id = ?", grantId).toArray()[0];
      if (!granted) throw new Error(`no grant ${grantId} to reverse`);
      const before = this.sql
        .exec<{ amount_nano: number; observed_at: number }>("SELECT amount_nano, observed_at FROM reversals WHERE grant_id = ?", grantId)
        .toArray()[0];
      const had = before?.amount_nano ?? 0;
      if (before && observedAt < before.observed_at) {
        reversedNano = had;
        stale = true;
        return;
      }
      reversedNano = Math.min(amountNano, granted.amount_nano);
      changeNano = reversedNano - had;
      this.sql.exec(
        "INSERT INTO reversals (grant_id, amount_nano, observed_at, source, updated_at) VALUES (?, ?, ?, ?, ?) " +
          "ON CONFLICT (grant_id) DO UPDATE SET amount_nano = excluded.amount_nano, observed_at = excluded.observed_at, source = excluded.source, " +
          "updated_at = excluded.updated_at",
        grantId,
        reversedNano,
        observedAt,
        source,
        this.clock(),
      );
      if (changeNano !== 0) this.sql.exec("UPDATE account SET credits_nano = credits_nano - ? WHERE id = 1", changeNano);
    });
    return { changeNano, reversedNano, stale, totals: this.totals() };
  }

  /** How many grants and reversals there are and what they add up to (credits = grants − reversals; audits check it). */
  grantsSummary(): GrantsSummary {
    const row = this.sql.exec<{ n: number; total: number }>("SELECT COUNT(*) AS n, COALESCE(SUM(amount_nano), 0) AS total FROM grants").one();
    const rev = this.sql.exec<{ n: number; total: number }>("SELECT COUNT(*) AS n, COALESCE(SUM(amount_nano), 0) AS total FROM reversals").one();
    return { count: row.n, totalNano: row.total, reversals: rev.n, reversedNano: rev.total };
  }

  /** One grant by id, or null: tells a repeated grant from a different one reusing its id. */
  findGrant(grantId: string): GrantRecord | null {
    const row = this.sql
      .exec<{ amount_nano: number; source: string; created_at: number }>("SELECT amount_nano, source, created_at FROM grants WHERE grant_id = ?", grantId)
      .toArray()[0];
    return row ? { grantId, amountNano: row.amount_nano, source: row.source, createdAt: row.created_at } : null;
  }

  totals(): Totals {
    const row = this.sql
      .exec<{ credits_nano: number; usage_nano: number; granted: number }>("SELECT credits_nano, usage_nano, granted FROM account WHERE id = 1")
      .one();
    return { creditsNano: row.credits_nano, usageNano: row.usage_nano, heldNano: this.heldNano(), granted: row.granted === 1 };
  }

  keyUsage(keyHash: string): KeyUsage {
    const { day, week, month } = windowStarts(this.clock());
    return {
      usageNano: this.keyUsageNano(keyHash),
      dailyNano: this.keyUsageNano(keyHash, day),
      weeklyNano: this.keyUsageNano(keyHash, week),
      monthlyNano: this.keyUsageNano(keyHash, month),
    };
  }

  /** `keyUsage` of many keys in one call (a page of /keys, the console's list); keys without usage get zeros. */
  keysUsage(keyHashes: string[]): Record<string, KeyUsage> {
    const { day, week, month } = windowStarts(this.clock());
    const out: Record<string, KeyUsage> = {};
    for (const h of keyHashes) out[h] = { usageNano: 0, dailyNano: 0, weeklyNano: 0, monthlyNano: 0 };
    const per = MAX_BOUND_PARAMS - 3; // three window starts bound beside the hashes
    for (let i = 0; i < keyHashes.length; i += per) {
      const chunk = keyHashes.slice(i, i + per);
      const rows = this.sql.exec<{ key_hash: string; total: number; daily: number; weekly: number; monthly: number }>(
        `SELECT key_hash, SUM(usage_nano) AS total,
           SUM(CASE WHEN day >= ?1 THEN usage_nano ELSE 0 END) AS daily,
           SUM(CASE WHEN day >= ?2 THEN usage_nano ELSE 0 END) AS weekly,
           SUM(CASE WHEN day >= ?3 THEN usage_nano ELSE 0 END) AS monthly
         FROM key_usage WHERE key_hash IN (${chunk.map((_, j) => `?${j + 4}`).join(", ")}) GROUP BY key_hash`,
        day,
        week,
        month,
        ...chunk,
      );
      for (const r of rows) out[r.key_hash] = { usageNano: r.total, dailyNano: r.daily, weeklyNano: r.weekly, monthlyNano: r.monthly };
    }
    return out;
  }

  /** A generation settled here and not yet in the records store. */
  pendingGeneration(genId: string): NewGeneration | null {
    return this.outbox.pending(genId);
  }

  /** The records store has this batch (src/generations/store-batches.ts): its records leave the outbox. Returns how many did. */
  recordsStored(batch: string): number {
    return this.outbox.stored(batch);
  }

  /** Sends every batch still waiting for the store again now, rather than at its ack timeout (an operator's replay of dead letters). Returns how many. */
  resendRecords(): number {
    const batches = this.outbox.resendAll();
    if (batches > 0) this.scheduleAlarm(0);
    return batches;
  }

  /** The oldest open holds and slices (requests admitted, not yet settled), for audits. */
  openHolds(limit = 100): OpenHold[] {
    const holds = this.sql
      .exec<{ gen_id: string; amount_nano: number; created_at: number; renewed_at: number }>(
        "SELECT gen_id, amount_nano, created_at, renewed_at FROM holds ORDER BY created_at LIMIT ?",
        limit,
      )
      .toArray()
      .map((h): OpenHold => ({
        id: h.gen_id,
        kind: "request",
        amountNano: h.amount_nano,
        createdAt: h.created_at,
        renewedAt: h.renewed_at,
        admitted: null,
        settled: null,
        released: false,
      }));
    const slices = this.sql
      .exec<{ lease_id: string; amount_nano: number; created_at: number; renewed_at: number; admitted: number; settled: number; released_at: number | null }>(
        "SELECT lease_id, amount_nano, created_at, renewed_at, admitted, settled, released_at FROM slices ORDER BY created_at LIMIT ?",
        limit,
      )
      .toArray()
      .map((s): OpenHold => ({
        id: s.lease_id,
        kind: "slice",
        amountNano: s.amount_nano,
        createdAt: s.created_at,
        renewedAt: s.renewed_at,
        admitted: s.admitted,
        settled: s.settled,
        released: s.released_at !== null,
      }));
    return [...holds, ...slices].sort((a, b) => a.createdAt - b.createdAt).slice(0, limit);
  }

  /** Slices that ended with requests admitted from them that never settled here (last 7 days). */
  sliceAudit(): SliceAudit {
    const sums = this.sql
      .exec<{ unsettled: number; expired: number }>(
        "SELECT COALESCE(SUM(MAX(admitted - settled, 0)), 0) AS unsettled, COALESCE(SUM(ended = 'expired'), 0) AS expired FROM slice_audit",
      )
      .one();
    const recent = this.sql
      .exec<{ lease_id: string; admitted: number; settled: number; ended_at: number; ended: string }>(
        "SELECT * FROM slice_audit ORDER BY ended_at DESC LIMIT ?",
        AUDIT_ROWS,
      )
      .toArray()
      .map((r): EndedSlice => ({
        leaseId: r.lease_id,
        admitted: r.admitted,
        settled: r.settled,
        endedAt: r.ended_at,
        ended: r.ended === "expired" ? "expired" : "released",
      }));
    return { unsettledAdmissions: sums.unsettled, expiredSlices: sums.expired, recent };
  }

  /** Records settled here and not yet in the records store. */
  outboxSize(): number {
    return this.outbox.size();
  }

  /**
   * Sends the outbox's records to the records queue in batches (given their ids first, so a batch sent
   * again is the same batch), sends again a batch not acknowledged within RECORDS_ACK_TIMEOUT_MS, expires
   * what dead isolates left, prunes old ids; reschedules while work remains.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    const now = this.clock();
    this.expire(now);
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.sql.exec("DELETE FROM debits WHERE settled_at < ?", now - RETENTION_MS);
      this.sql.exec("DELETE FROM slice_audit WHERE ended_at < ?", now - RETENTION_MS);
      this.outbox.prune(now);
      this.prunedAt = now;
    }
    this.outbox.assign(this.timings.flushMaxRecords);
    const due = this.outbox.due(now - this.timings.recordsAckTimeoutMs);
    const { sent, failed } = await sendBatches(this.env.RECORDS_QUEUE, due);
    this.outbox.markSent(sent, now);
    if (failed > 0) {
      // Nothing is lost: those batches stay here, assigned, and go again. Not at once: a batch the queue
      // refuses whatever happens (one too large) would otherwise be sent every second; it stays pending, seen in the audit.
      this.scheduleAlarm(this.timings.recordsAckTimeoutMs);
      return;
    }
    const next = this.outbox.next(this.timings.recordsAckTimeoutMs);
    if (next.unassigned) this.scheduleAlarm(0);
    else {
      const due = [this.nextExpiry(), next.resendAt].filter((t) => t > 0);
      if (due.length) this.scheduleAlarm(Math.max(0, Math.min(...due) - now));
    }
  }

  /**
   * Ends what no live isolate keeps: a request hold not renewed for the hold TTL (its request died:
   * nothing is debited, and the record made at admission says so; a settle arriving later still
   * applies once); a slice not renewed for the lease TTL (its isolate died); a released slice whose
   * admitted requests never all settled within the hold TTL. Slices that end with admissions not seen
   * settled, or with their isolate dead, are kept in slice_audit.
   */
  private expire(now: number): void {
    const { holdTtlMs, leaseTtlMs } = this.timings;
    this.ctx.storage.transactionSync(() => {
      const holds = this.sql.exec<{ gen_id: string; record: string }>("SELECT gen_id, record FROM holds WHERE renewed_at < ?", now - holdTtlMs).toArray();
      for (const h of holds) {
        this.outbox.addAbandoned(h.gen_id, h.record, now);
        this.sql.exec("DELETE FROM holds WHERE gen_id = ?", h.gen_id);
      }
      const ended = this.sql
        .exec<{ lease_id: string; admitted: number; settled: number; released_at: number | null }>(
          "DELETE FROM slices WHERE (released_at IS NULL AND renewed_at < ?) OR (released_at IS NOT NULL AND released_at < ?) RETURNING lease_id, admitted, settled, released_at",
          now - leaseTtlMs,
          now - holdTtlMs,
        )
        .toArray();
      for (const s of ended)
        if (s.released_at === null || s.admitted > s.settled)
          this.sql.exec(
            "INSERT OR REPLACE INTO slice_audit (lease_id, admitted, settled, ended_at, ended) VALUES (?, ?, ?, ?, ?)",
            s.lease_id,
            s.admitted,
            s.settled,
            now,
            s.released_at === null ? "expired" : "released",
          );
    });
  }

  /** When the next hold or slice would expire (ms epoch), 0 when none is open. */
  private nextExpiry(): number {
    const { holdTtlMs, leaseTtlMs } = this.timings;
    const hold = this.one(`SELECT COALESCE(MIN(renewed_at), 0) AS v FROM holds`);
    const slice = this.one(
      `SELECT COALESCE(MIN(CASE WHEN released_at IS NULL THEN renewed_at + ${leaseTtlMs} ELSE released_at + ${holdTtlMs} END), 0) AS v FROM slices`,
    );
    const due = [hold ? hold + holdTtlMs : 0, slice].filter((t) => t > 0);
    return due.length ? Math.min(...due) : 0;
  }

  /** Makes the alarm fire no later than `inMs` from now (an earlier one already set stands). */
  private scheduleAlarm(inMs: number): void {
    const at = Date.now() + inMs;
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  private available(): number {
    const t = this.totals();
    return t.creditsNano - t.usageNano - t.heldNano;
  }

  private heldNano(): number {
    return this.one("SELECT (SELECT COALESCE(SUM(amount_nano),0) FROM holds) + (SELECT COALESCE(SUM(amount_nano),0) FROM slices) AS v");
  }

  /** A key's settled usage since the UTC day `from` (inclusive), or ever when null. */
  private keyUsageNano(keyHash: string, from: string | null = null): number {
    return this.one("SELECT COALESCE(SUM(usage_nano),0) AS v FROM key_usage WHERE key_hash = ? AND day >= ?", keyHash, from ?? "");
  }

  private one(query: string, ...bindings: unknown[]): number {
    return this.sql.exec<{ v: number }>(query, ...bindings).one().v;
  }
}

/** Sums the cost of items per key, skipping items without one. */
function sumBy(items: SettleRequest[], key: (i: SettleRequest) => string | undefined): Map<string, number> {
  const sums = new Map<string, number>();
  for (const i of items) {
    const k = key(i);
    if (k !== undefined) sums.set(k, (sums.get(k) ?? 0) + i.costNano);
  }
  return sums;
}

/** Cost and count of leased items per slice. */
function perLease(items: SettleRequest[]): Map<string, { nano: number; count: number }> {
  const out = new Map<string, { nano: number; count: number }>();
  for (const i of items) {
    if (i.leaseId === undefined) continue;
    const s = out.get(i.leaseId) ?? { nano: 0, count: 0 };
    s.nano += i.costNano;
    s.count++;
    out.set(i.leaseId, s);
  }
  return out;
}

/**
 * The batches to the records queue, as few `sendBatch` calls as its limits allow; a call that fails is
 * tried again batch by batch, so one batch the queue refuses holds back no other. Returns the batches sent
 * and how many were not (each logged).
 */
async function sendBatches(queue: Queue<RecordBatch>, batches: RecordBatch[]): Promise<{ sent: string[]; failed: number }> {
  const groups = sendGroups(batches);
  const sent: string[] = [];
  let failed = 0;
  for (const g of groups) {
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
