import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { NewGeneration } from "../db/schema";
import { flushGenerations } from "../db/generations";
import { migrateLedger } from "./ledger-sql";

/** How long an unsettled hold may live before the alarm releases it (its request died without settling). */
export const HOLD_TTL_MS = 30 * 60_000;
/**
 * How long an isolate's slice may live before the alarm releases it. Isolates retire slices within
 * seconds; one still here this late belongs to an isolate that died. Requests admitted from it that
 * are still running then lose their hold backing (README: overdraft bound).
 */
export const LEASE_TTL_MS = 2 * 60_000;
/** How soon after a settle the outbox is copied to D1: batches of hundreds (one D1 commit each); `/generation` reads the outbox meanwhile. */
const FLUSH_DELAY_MS = 1000;
/** Records per flush: one D1 commit (a few statements of 512 KiB) each; more wait for the next alarm, at once. */
const FLUSH_MAX_RECORDS = 2000;
/** Bound parameters per SQL statement (SQLite in Durable Objects allows 100). */
const MAX_BOUND_PARAMS = 100;
/** Settled debit ids kept for idempotency this long. */
const DEBIT_RETENTION_MS = 7 * 24 * 3600_000;
/** How often old debit ids are pruned: a scan of the whole table, so not on every flush. */
const PRUNE_EVERY_MS = 3600_000;

export type AdmitRequest = {
  genId: string;
  keyHash: string;
  /** Key credit limit in nano-USD, null when the key has none. */
  limitNano: number | null;
  /** Worst-case cost held until settle; 0 for free models. */
  holdNano: number;
  /** Whether the model costs anything: only paid models need a positive balance. */
  paid: boolean;
  /** The record written (cost 0) should the request die without settling and its hold expire. */
  abandoned: NewGeneration;
};
export type AdmitResult = { ok: true } | { ok: false; reason: "balance" | "key_limit" };

export type SettleRequest = {
  genId: string;
  keyHash: string;
  /** What to debit, nano-USD; 0 for a failed request. */
  costNano: number;
  /** The generation record, stored with the debit in one transaction and copied to D1 later. */
  record: NewGeneration;
  /** The lease the request was admitted under (its cost leaves the lease), or none (its own hold). */
  leaseId?: string;
};

export type LeaseRequest = {
  leaseId: string;
  /** The hold of the request asking: granted even when it exceeds the available balance (see README bound). */
  holdNano: number;
  /** How much the isolate would like to spend locally. */
  wantNano: number;
};
export type LeaseResult = { ok: true; grantNano: number } | { ok: false; reason: "balance" };

export type GrantRequest = {
  /** Idempotency id: a grant with an id seen before changes nothing (`admin:<key>`, `payment:<pay_id>`, …). */
  grantId: string;
  amountNano: number;
  /** Who granted it: `admin`, `console-payment`, `account-created`. */
  source: string;
};
export type GrantResult = { applied: boolean; totals: Totals };
export type GrantsSummary = { count: number; totalNano: number };
export type GrantRecord = { grantId: string; amountNano: number; source: string; createdAt: number };

export type Totals = { creditsNano: number; usageNano: number; heldNano: number; granted: boolean };
export type KeyUsage = { usageNano: number; dailyNano: number; weeklyNano: number; monthlyNano: number };

/**
 * The balance ledger of one account. Every admission and debit of the account runs here, one at a
 * time, so parallel requests never lose or double-count a debit. Each method body is synchronous
 * SQL, hence atomic; `settleBatch` is idempotent on the generation id.
 */
export class LedgerObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** When the stored alarm fires (ms epoch), null when none is set; mirrors storage to skip redundant writes. */
  private alarmAt: number | null = null;
  /** When this instance last pruned old debit ids (ms epoch); 0 = not yet. */
  private prunedAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrateLedger(this.sql);
    void ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  admit(req: AdmitRequest): AdmitResult {
    if (req.limitNano !== null) {
      const used = this.keyUsageNano(req.keyHash) + this.one("SELECT COALESCE(SUM(amount_nano),0) AS v FROM holds WHERE key_hash = ?", req.keyHash);
      if (used >= req.limitNano) return { ok: false, reason: "key_limit" };
    }
    if (req.paid) {
      const t = this.totals();
      if (t.creditsNano - t.usageNano - t.heldNano <= 0) return { ok: false, reason: "balance" };
    }
    if (req.holdNano > 0 || req.limitNano !== null) {
      this.sql.exec(
        "INSERT OR IGNORE INTO holds (gen_id, key_hash, amount_nano, created_at, record) VALUES (?, ?, ?, ?, ?)",
        req.genId,
        req.keyHash,
        req.holdNano,
        Date.now(),
        JSON.stringify(req.abandoned),
      );
      this.scheduleAlarm(HOLD_TTL_MS);
    }
    return { ok: true };
  }

  /**
   * Grants an isolate a slice of the balance to admit requests locally (no round trip per request).
   * Refused like `admit` when nothing is available; otherwise at least the asking request's hold and
   * at most half of what is available. The slice is a hold like any other until settles spend it or it is released.
   */
  lease(req: LeaseRequest): LeaseResult {
    const t = this.totals();
    const available = t.creditsNano - t.usageNano - t.heldNano;
    if (available <= 0) return { ok: false, reason: "balance" };
    // At most half of what is available, so other isolates of the account still find money.
    const grantNano = Math.max(req.holdNano, Math.min(req.wantNano, Math.ceil(available / 2)));
    this.sql.exec("INSERT INTO holds (gen_id, key_hash, amount_nano, created_at, record) VALUES (?, '', ?, ?, NULL)", req.leaseId, grantNano, Date.now());
    this.scheduleAlarm(LEASE_TTL_MS);
    return { ok: true, grantNano };
  }

  /**
   * Debits each request's cost and stores its record, exactly once per generation id, in one
   * transaction; then deletes the released leases (their unspent remainder returns to the balance).
   * Returns how many requests this call applied (a retried batch applies none twice). A handful of
   * statements per batch, whatever its size: the debits insert tells which ids are new, and usage,
   * key usage and lease spending are summed before they are written.
   */
  settleBatch(items: SettleRequest[], releasedLeases: string[]): number {
    let applied = 0;
    this.ctx.storage.transactionSync(() => {
      const now = Date.now();
      // A request admitted on its own hold releases it, applied or not (a retry finds it gone).
      this.execChunked("DELETE FROM holds WHERE gen_id IN ($)", items.filter((i) => !i.leaseId).map((i) => [i.genId]));
      const fresh = this.insertDebits(items, now);
      const settled = items.filter((i) => fresh.delete(i.genId)); // once each, even if listed twice
      applied = settled.length;
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
      // What leased requests spent leaves their lease's hold and becomes usage.
      for (const [leaseId, nano] of sumBy(settled, (i) => i.leaseId))
        if (nano > 0) this.sql.exec("UPDATE holds SET amount_nano = MAX(0, amount_nano - ?) WHERE gen_id = ? AND record IS NULL", nano, leaseId);
      // REPLACE: a late settle supersedes the "abandoned" record an expired hold left.
      this.execChunked("INSERT OR REPLACE INTO outbox (gen_id, record) VALUES $", settled.map((i) => [i.genId, JSON.stringify(i.record)]));
      this.execChunked("DELETE FROM holds WHERE record IS NULL AND gen_id IN ($)", releasedLeases.map((id) => [id]));
    });
    this.scheduleAlarm(FLUSH_DELAY_MS);
    return applied;
  }

  /** Inserts the debits not seen before; returns their generation ids. */
  private insertDebits(items: SettleRequest[], now: number): Set<string> {
    const fresh = new Set<string>();
    const rows = items.map((i) => [i.genId, i.keyHash, i.costNano, now]);
    this.execChunked("INSERT OR IGNORE INTO debits (gen_id, key_hash, cost_nano, settled_at) VALUES $ RETURNING gen_id", rows, (r) => fresh.add(r.gen_id as string));
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
        this.sql.exec("INSERT OR IGNORE INTO grants (grant_id, amount_nano, source, created_at) VALUES (?, ?, ?, ?) RETURNING grant_id", grantId, amountNano, source, Date.now()).toArray()
          .length === 1;
      if (applied) this.sql.exec("UPDATE account SET credits_nano = credits_nano + ?, granted = 1 WHERE id = 1", amountNano);
    });
    return { applied, totals: this.totals() };
  }

  /** How many grants there are and what they add up to (equals credits; audits check it). */
  grantsSummary(): GrantsSummary {
    const row = this.sql.exec<{ n: number; total: number }>("SELECT COUNT(*) AS n, COALESCE(SUM(amount_nano), 0) AS total FROM grants").one();
    return { count: row.n, totalNano: row.total };
  }

  /** One grant by id, or null: tells a repeated grant from a different one reusing its id. */
  findGrant(grantId: string): GrantRecord | null {
    const row = this.sql
      .exec<{ amount_nano: number; source: string; created_at: number }>("SELECT amount_nano, source, created_at FROM grants WHERE grant_id = ?", grantId)
      .toArray()[0];
    return row ? { grantId, amountNano: row.amount_nano, source: row.source, createdAt: row.created_at } : null;
  }

  totals(): Totals {
    const row = this.sql.exec<{ credits_nano: number; usage_nano: number; granted: number }>("SELECT credits_nano, usage_nano, granted FROM account WHERE id = 1").one();
    return {
      creditsNano: row.credits_nano,
      usageNano: row.usage_nano,
      heldNano: this.one("SELECT COALESCE(SUM(amount_nano),0) AS v FROM holds"),
      granted: row.granted === 1,
    };
  }

  keyUsage(keyHash: string): KeyUsage {
    const now = new Date();
    const today = utcDay(now.getTime());
    const weekStart = utcDay(now.getTime() - ((now.getUTCDay() + 6) % 7) * 86_400_000); // Monday
    const monthStart = today.slice(0, 8) + "01";
    const sum = (from: string) => this.one("SELECT COALESCE(SUM(usage_nano),0) AS v FROM key_usage WHERE key_hash = ? AND day >= ?", keyHash, from);
    return { usageNano: this.keyUsageNano(keyHash), dailyNano: sum(today), weeklyNano: sum(weekStart), monthlyNano: sum(monthStart) };
  }

  /** A generation settled here but not yet copied to D1. */
  pendingGeneration(genId: string): NewGeneration | null {
    const row = this.sql.exec<{ record: string }>("SELECT record FROM outbox WHERE gen_id = ?", genId).toArray()[0];
    return row ? (JSON.parse(row.record) as NewGeneration) : null;
  }

  /** The oldest open holds (requests admitted, not yet settled), for audits. */
  openHolds(limit = 100): Array<{ genId: string; amountNano: number; createdAt: number }> {
    return this.sql
      .exec<{ gen_id: string; amount_nano: number; created_at: number }>("SELECT gen_id, amount_nano, created_at FROM holds ORDER BY created_at LIMIT ?", limit)
      .toArray()
      .map((h) => ({ genId: h.gen_id, amountNano: h.amount_nano, createdAt: h.created_at }));
  }

  /** Records settled here and not yet copied to D1. */
  outboxSize(): number {
    return this.one("SELECT COUNT(*) AS v FROM outbox");
  }

  /** Copies the outbox to D1, releases expired holds and prunes old debit ids; reschedules while work remains. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    const now = Date.now();
    this.expireHolds(now);
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.sql.exec("DELETE FROM debits WHERE settled_at < ?", now - DEBIT_RETENTION_MS);
      this.prunedAt = now;
    }
    const rows = this.sql.exec<{ gen_id: string; record: string }>("SELECT gen_id, record FROM outbox ORDER BY rowid LIMIT ?", FLUSH_MAX_RECORDS).toArray();
    if (rows.length > 0) {
      // Idempotent insert: a flush that D1 applied but we did not see confirmed is repeated harmlessly.
      await flushGenerations(this.env.DB, rows.map((r) => r.record));
      // Only the records flushed: one a late settle replaced meanwhile stays for the next flush.
      this.execChunked("DELETE FROM outbox WHERE (gen_id, record) IN (VALUES $)", rows.map((r) => [r.gen_id, r.record]));
    }
    if (this.one("SELECT COUNT(*) AS v FROM outbox") > 0) this.scheduleAlarm(0);
    else {
      const due = this.one(`SELECT COALESCE(MIN(created_at + CASE WHEN record IS NULL THEN ${LEASE_TTL_MS} ELSE ${HOLD_TTL_MS} END), 0) AS v FROM holds`);
      if (due > 0) this.scheduleAlarm(Math.max(0, due - now));
    }
  }

  /**
   * Releases holds whose request died without settling (isolate evicted, Worker restarted): nothing is
   * debited, and the record made at admission says so. A settle arriving later still applies once.
   */
  private expireHolds(now: number): void {
    this.ctx.storage.transactionSync(() => {
      const expired = this.sql
        .exec<{ gen_id: string; record: string | null }>(
          "SELECT gen_id, record FROM holds WHERE (record IS NOT NULL AND created_at < ?) OR (record IS NULL AND created_at < ?)",
          now - HOLD_TTL_MS,
          now - LEASE_TTL_MS,
        )
        .toArray();
      for (const h of expired) {
        if (h.record) this.sql.exec("INSERT OR IGNORE INTO outbox (gen_id, record) VALUES (?, ?)", h.gen_id, h.record);
        this.sql.exec("DELETE FROM holds WHERE gen_id = ?", h.gen_id);
      }
    });
  }

  /** Makes the alarm fire no later than `inMs` from now (an earlier one already set stands). */
  private scheduleAlarm(inMs: number): void {
    const at = Date.now() + inMs;
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  private keyUsageNano(keyHash: string): number {
    return this.one("SELECT COALESCE(SUM(usage_nano),0) AS v FROM key_usage WHERE key_hash = ?", keyHash);
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

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
