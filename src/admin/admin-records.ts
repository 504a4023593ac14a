import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../keys/caller";
import { ApiError } from "../request/errors";
import { db } from "../db/client";
import { generations } from "../db/schema";
import { sql } from "drizzle-orm";
import { ledgerFor } from "../ledger/ledger";
import { moveRecordsFromD1 } from "../generations/archive-records";
import { recordStores, recordsPage } from "../generations/record-pages";
import { recordLine } from "../generations/archive-format";
import { accountOr404 } from "./admin-input";

/** The operator's view of the generation records: an account's newest, its batches sent again, records moved out of D1. */
export const adminRecordRoutes = new Hono<AppEnv>();

/**
 * The account's newest stored records (R2 and D1; not those still in its ledger's outbox), up to `limit`
 * (1–500, default 50), each with its D1 column names as in the archive's objects: for support and checks.
 */
adminRecordRoutes.get("/accounts/:ref/records", async (c) => {
  const query = z
    .object({ limit: z.coerce.number().int().min(1).max(500).default(50) })
    .strict()
    .safeParse(c.req.query());
  if (!query.success) throw new ApiError(400, "The only query parameter is `limit`, a whole number from 1 to 500 (default 50).");
  const { limit } = query.data;
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  const { rows, more } = await recordsPage(recordStores(c.env, c.var.settings), account.id, {}, "older", null, limit);
  return c.json({ id: account.id, data: rows.map((g) => JSON.parse(recordLine(g)) as Record<string, unknown>), more });
});

/**
 * Sends the account's record batches still waiting for the records store again now (dead letters among
 * them), rather than at their ack timeout (docs/operate.md); stored once however often they arrive.
 */
adminRecordRoutes.post("/accounts/:ref/records/resend", async (c) => {
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  return c.json({ id: account.id, batches: await ledgerFor(c.env, account.id).resendRecords() });
});

/**
 * Moves the records an earlier release kept in D1 to R2 (docs/operate.md, "Moving records out of D1"): one
 * run of the archive over every record in D1, whatever its age; resumable, call again until `done`.
 */
adminRecordRoutes.post("/records/move-from-d1", async (c) => {
  const run = await moveRecordsFromD1(c.env, c.var.settings);
  const [left] = await db(c.env.DB)
    .select({ rows: sql<number>`count(*)` })
    .from(generations);
  return c.json({ parts: run.parts, records: run.records, not_committed: run.notCommitted, done: run.done, generations_in_d1: left?.rows ?? 0 });
});
