import { Hono } from "hono";
import type { AppEnv } from "../keys/caller";
import { db } from "../db/client";
import { archiveParts, deadRecordBatches, endpointAttempts, endpointMinuteHistograms, endpointMinutes, generations, recordRollups } from "../db/schema";
import { eq, sql } from "drizzle-orm";
import { ledgerFor } from "../ledger/ledger";
import { archiveTotals, d1SizeBytes, recordTotals } from "../db/archive-index";
import { accountOr404 } from "./admin-input";

/** The operator's audits: an account's money invariants, and the service's storage. */
export const adminAuditRoutes = new Hono<AppEnv>();

/**
 * The money invariants, for audits and the soak test: credits beside Σ grants, usage beside the sum of the
 * account's records (those in D1 and those archived to R2, read in one snapshot), what is held and by
 * what, and slices that ended with admitted requests never settled.
 */
adminAuditRoutes.get("/accounts/:ref/audit", async (c) => {
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  const ledger = ledgerFor(c.env, account.id);
  const [totals, pending, records, holds, grants, slices] = await Promise.all([
    ledger.totals(),
    ledger.outboxSize(),
    recordTotals(c.env.DB, account.id),
    ledger.openHolds(),
    ledger.grantsSummary(),
    ledger.sliceAudit(),
  ]);
  const iso = (ms: number) => new Date(ms).toISOString();
  return c.json({
    id: account.id,
    credits_nano: totals.creditsNano,
    // credits = Σ grants − Σ reversals: every grant is one ledger entry with an id, a source and a time;
    // a reversal takes part of a grant back (a payment refunded or disputed).
    grants: grants.count,
    grants_nano: grants.totalNano,
    reversals: grants.reversals,
    reversed_nano: grants.reversedNano,
    usage_nano: totals.usageNano,
    held_nano: totals.heldNano,
    // Every record the account ever had stored: in R2 through the records queue, in D1 (before it), and those
    // the archive moved from D1 to R2; usage = their cost once none is pending.
    records: records.d1.count + records.archive.records + records.stored.count,
    records_cost_nano: records.d1.costNano + records.archive.costNano + records.stored.costNano,
    records_pending: pending,
    // Of the pending: batches the records queue gave up on (dead letters), sent again by the ledger.
    records_dead_batches: records.deadBatches,
    records_stored: records.stored.count,
    records_in_d1: records.d1.count,
    records_archived: records.archive.records,
    archive_objects: records.archive.objects,
    archive_bytes: records.archive.bytes,
    open_holds: holds.map((h) => ({
      id: h.id,
      kind: h.kind,
      amount_nano: h.amountNano,
      created_at: iso(h.createdAt),
      renewed_at: iso(h.renewedAt),
      ...(h.kind === "slice" ? { admitted: h.admitted, settled: h.settled, released: h.released } : {}),
    })),
    unsettled_admissions: slices.unsettledAdmissions,
    expired_slices: slices.expiredSlices,
    ended_slices: slices.recent.map((s) => ({ lease_id: s.leaseId, admitted: s.admitted, settled: s.settled, ended: s.ended, ended_at: iso(s.endedAt) })),
  });
});

/**
 * The service's storage: D1's size beside its limit, what fills it, and the records archive in R2
 * (docs/operate.md). Counting generation rows reads an index of the whole table: an operator's call,
 * not a request path's.
 */
adminAuditRoutes.get("/storage", async (c) => {
  const s = c.var.settings;
  const q = db(c.env.DB);
  const [size, [d1Rows, attempts, writing, dead, rollups, minutes, histograms], archive] = await Promise.all([
    d1SizeBytes(c.env.DB),
    q.batch([
      // min(created_at) is one step of the created_at index.
      q.select({ rows: sql<number>`count(*)`, oldest: sql<number | null>`min(${generations.createdAt})` }).from(generations),
      q.select({ rows: sql<number>`count(*)` }).from(endpointAttempts),
      q
        .select({ parts: sql<number>`count(*)` })
        .from(archiveParts)
        .where(eq(archiveParts.state, "writing")),
      q.select({ batches: sql<number>`count(*)`, records: sql<number>`coalesce(sum(${deadRecordBatches.records}), 0)` }).from(deadRecordBatches),
      q.select({ rows: sql<number>`count(*)` }).from(recordRollups),
      q.select({ rows: sql<number>`count(*)` }).from(endpointMinutes),
      q.select({ rows: sql<number>`count(*)` }).from(endpointMinuteHistograms),
    ]),
    archiveTotals(c.env.DB),
  ]);
  const oldest = d1Rows[0]?.oldest ?? null;
  return c.json({
    d1_size_bytes: size,
    d1_limit_bytes: s.D1_SIZE_LIMIT_BYTES,
    d1_percent: size === null ? null : Math.round((size / s.D1_SIZE_LIMIT_BYTES) * 1000) / 10,
    d1_warn_percent: s.D1_SIZE_WARN_PERCENT,
    generations_in_d1: d1Rows[0]?.rows ?? 0,
    oldest_record_in_d1: oldest === null ? null : new Date(oldest).toISOString(),
    endpoint_attempts: attempts[0]?.rows ?? 0,
    archive_objects: archive.objects,
    archive_bytes: archive.bytes,
    archive_records: archive.records,
    archive_parts_writing: writing[0]?.parts ?? 0,
    record_rollup_rows: rollups[0]?.rows ?? 0,
    endpoint_minute_rows: (minutes[0]?.rows ?? 0) + (histograms[0]?.rows ?? 0),
    // Record batches the records queue gave up on: their records wait in their ledgers, which send them again.
    dead_record_batches: dead[0]?.batches ?? 0,
    dead_record_batch_records: dead[0]?.records ?? 0,
    retention_days: s.RECORDS_RETENTION_DAYS,
  });
});
