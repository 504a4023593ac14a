import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../env";
import { ApiError } from "../request/errors";
import { requireAdmin } from "./admin-auth";
import { db } from "../db/client";
import {
  accounts,
  apiKeys,
  archiveParts,
  deadRecordBatches,
  endpointAttempts,
  endpointMinuteHistograms,
  endpointMinutes,
  generations,
  recordRollups,
  type ApiKey,
} from "../db/schema";
import { asc, eq, sql } from "drizzle-orm";
import { createKey, findAccount, setKeyDisabled, setKeyLimit } from "../keys/key-store";
import { ledgerFor } from "../ledger/ledger";
import type { Totals } from "../ledger/contract";
import { nanoToUsd, usdToNano } from "../catalog/money";
import { randomId } from "../keys/api-key";
import { archiveTotals, d1SizeBytes, recordTotals } from "../db/archive-index";
import { moveRecordsFromD1 } from "../generations/archive-records";
import { recordStores, recordsPage } from "../generations/record-pages";
import { recordLine } from "../generations/archive-format";
import { settings } from "../settings";
import { adminLinkRoutes } from "./admin-links";

/** The operator's API behind `npm run admin`: accounts, keys, credits. */
export const adminRoutes = new Hono<AppEnv>();
adminRoutes.use("*", requireAdmin);
adminRoutes.route("/", adminLinkRoutes);

const usd = z.number().positive().max(1_000_000).finite();
/** A starting balance may be zero (no grant is made then). */
const startingUsd = z.number().min(0).max(1_000_000).finite();
const createAccountBody = z.object({ email: z.email().max(254), credits: startingUsd.optional() });
const createKeyBody = z
  .object({ account: z.string().min(1).max(254), label: z.string().min(1).max(100).optional(), limit: usd.optional(), management: z.boolean().optional() })
  .refine((b) => !(b.management && b.limit !== undefined), { message: "a management key runs no completions, so it takes no limit", path: ["limit"] });
/** The operator's own id for a grant (an invoice number, a ticket): the same key grants once. */
const idempotencyKey = z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/, "1 to 100 letters, digits, '.', '_', ':' or '-'");
const grantBody = z.object({ usd, idempotency_key: idempotencyKey.optional() });
const keyLimitBody = z.object({ limit: usd.nullable() });
const hashParam = z.string().regex(/^[0-9a-f]{64}$/);

async function json<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  const parsed = schema.safeParse(await req.json().catch(() => undefined));
  if (!parsed.success) throw new ApiError(400, `Invalid body: ${parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

async function accountOr404(d1: D1Database, ref: string) {
  const account = await findAccount(d1, ref);
  if (!account) throw new ApiError(404, `No account ${ref}.`);
  return account;
}

const presentTotals = (t: Totals) => ({
  total_credits: nanoToUsd(t.creditsNano),
  total_usage: nanoToUsd(t.usageNano),
  balance: nanoToUsd(t.creditsNano - t.usageNano),
  held: nanoToUsd(t.heldNano),
});
const presentKey = (k: ApiKey) => ({
  hash: k.hash,
  label: k.label,
  name: k.name,
  account_id: k.accountId,
  disabled: k.disabled,
  limit: k.limitNano === null ? null : nanoToUsd(k.limitNano),
  is_management: k.isManagement,
});

adminRoutes.post("/accounts", async (c) => {
  const body = await json(c.req.raw, createAccountBody);
  if (await findAccount(c.env.DB, body.email)) throw new ApiError(409, `An account with email ${body.email} exists.`);
  const account = { id: randomId("acct_", 12), email: body.email, createdAt: Date.now() };
  await db(c.env.DB).insert(accounts).values(account);
  const ledger = ledgerFor(c.env, account.id);
  // Zero starting credits make no grant (a grant is positive); the account starts at 0.
  const totals = body.credits
    ? (await ledger.grant({ grantId: `account-created:${account.id}`, amountNano: usdToNano(body.credits), source: "admin" })).totals
    : await ledger.totals();
  return c.json({ id: account.id, email: account.email, ...presentTotals(totals) }, 201);
});

/** One page of a list: `offset` from 0, `limit` 1–500 (default 100); `next_offset` null on the last page. */
const pageQuery = z.object({ offset: z.coerce.number().int().min(0).default(0), limit: z.coerce.number().int().min(1).max(500).default(100) });
function pageOf(c: { req: { query(): Record<string, string> } }) {
  const parsed = pageQuery.safeParse(c.req.query());
  if (!parsed.success) throw new ApiError(400, `Invalid paging: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}
function page<T>(rows: T[], offset: number, limit: number) {
  // One row beyond the page says whether there is another.
  return { data: rows.slice(0, limit), offset, next_offset: rows.length > limit ? offset + limit : null };
}

/** The accounts, oldest first, a page at a time (their balances: `show-account`, one ledger call each). */
adminRoutes.get("/accounts", async (c) => {
  const { offset, limit } = pageOf(c);
  const rows = await db(c.env.DB)
    .select()
    .from(accounts)
    .orderBy(asc(accounts.createdAt), asc(accounts.id))
    .limit(limit + 1)
    .offset(offset);
  return c.json(
    page(
      rows.map((a) => ({ id: a.id, email: a.email, created_at: new Date(a.createdAt).toISOString() })),
      offset,
      limit,
    ),
  );
});

/** An account's keys, oldest first, a page at a time: hashes and labels only, never a key. */
adminRoutes.get("/accounts/:ref/keys", async (c) => {
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  const { offset, limit } = pageOf(c);
  const rows = await db(c.env.DB)
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.accountId, account.id))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.hash))
    .limit(limit + 1)
    .offset(offset);
  return c.json(page(rows.map(presentKey), offset, limit));
});

adminRoutes.get("/accounts/:ref", async (c) => {
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  return c.json({ id: account.id, email: account.email, ...presentTotals(await ledgerFor(c.env, account.id).totals()) });
});

/**
 * The money invariants, for audits and the soak test: credits beside Σ grants, usage beside the sum of the
 * account's records (those in D1 and those archived to R2, read in one snapshot), what is held and by
 * what, and slices that ended with admitted requests never settled.
 */
adminRoutes.get("/accounts/:ref/audit", async (c) => {
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
adminRoutes.get("/storage", async (c) => {
  const s = settings(c.env);
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

/**
 * The account's newest stored records (R2 and D1; not those still in its ledger's outbox), up to `limit`
 * (1–500, default 50), each with its D1 column names as in the archive's objects: for support and checks.
 */
adminRoutes.get("/accounts/:ref/records", async (c) => {
  const query = z
    .object({ limit: z.coerce.number().int().min(1).max(500).default(50) })
    .strict()
    .safeParse(c.req.query());
  if (!query.success) throw new ApiError(400, "The only query parameter is `limit`, a whole number from 1 to 500 (default 50).");
  const { limit } = query.data;
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  const { rows, more } = await recordsPage(recordStores(c.env), account.id, {}, "older", null, limit);
  return c.json({ id: account.id, data: rows.map((g) => JSON.parse(recordLine(g)) as Record<string, unknown>), more });
});

/**
 * Sends the account's record batches still waiting for the records store again now (dead letters among
 * them), rather than at their ack timeout (docs/operate.md); stored once however often they arrive.
 */
adminRoutes.post("/accounts/:ref/records/resend", async (c) => {
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  return c.json({ id: account.id, batches: await ledgerFor(c.env, account.id).resendRecords() });
});

/**
 * Moves the records an earlier release kept in D1 to R2 (docs/operate.md, "Moving records out of D1"): one
 * run of the archive over every record in D1, whatever its age; resumable, call again until `done`.
 */
adminRoutes.post("/records/move-from-d1", async (c) => {
  const run = await moveRecordsFromD1(c.env);
  const [left] = await db(c.env.DB)
    .select({ rows: sql<number>`count(*)` })
    .from(generations);
  return c.json({ parts: run.parts, records: run.records, not_committed: run.notCommitted, done: run.done, generations_in_d1: left?.rows ?? 0 });
});

/**
 * Grants credits. With `idempotency_key` K the grant's id is `admin:K`: a retried command (say, after a
 * lost reply) applies once and answers `applied: false`; K reused with another amount is refused (409).
 */
adminRoutes.post("/accounts/:ref/credits", async (c) => {
  const body = await json(c.req.raw, grantBody);
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  const ledger = ledgerFor(c.env, account.id);
  const grantId = `admin:${body.idempotency_key ?? randomId("", 16)}`;
  const amountNano = usdToNano(body.usd);
  const granted = await ledger.grant({ grantId, amountNano, source: "admin" });
  if (!granted.applied) {
    const earlier = await ledger.findGrant(grantId);
    if (earlier && earlier.amountNano !== amountNano)
      throw new ApiError(
        409,
        `Idempotency key ${body.idempotency_key} was already used for a grant of ${nanoToUsd(earlier.amountNano)} USD; nothing was granted.`,
      );
  }
  return c.json({ id: account.id, email: account.email, grant_id: grantId, applied: granted.applied, ...presentTotals(granted.totals) });
});

adminRoutes.post("/keys", async (c) => {
  const body = await json(c.req.raw, createKeyBody);
  const account = await accountOr404(c.env.DB, body.account);
  const { key, record } = await createKey(c.env.DB, account.id, body.label ?? (body.management ? "management" : "default"), {
    limitNano: body.limit === undefined ? null : usdToNano(body.limit),
    isManagement: body.management ?? false,
  });
  return c.json({ key, ...presentKey(record) }, 201);
});

for (const [action, disabled] of [
  ["disable", true],
  ["enable", false],
] as const) {
  adminRoutes.post(`/keys/:hash/${action}`, async (c) => {
    const hash = hashParam.safeParse(c.req.param("hash"));
    const key = hash.success ? await setKeyDisabled(c.env.DB, hash.data, disabled) : undefined;
    if (!key) throw new ApiError(404, "No key with that hash.");
    return c.json(presentKey(key));
  });
}

/** Sets (a USD amount) or removes (null) a key's credit limit; this isolate applies it to the key's next request. */
adminRoutes.post("/keys/:hash/limit", async (c) => {
  const hash = hashParam.safeParse(c.req.param("hash"));
  if (!hash.success) throw new ApiError(404, "No key with that hash.");
  const body = await json(c.req.raw, keyLimitBody);
  const key = await setKeyLimit(c.env.DB, hash.data, body.limit === null ? null : usdToNano(body.limit));
  if (!key) throw new ApiError(404, "No key with that hash.");
  return c.json(presentKey(key));
});
