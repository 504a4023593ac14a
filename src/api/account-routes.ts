import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../keys/caller";
import { requireKey } from "./auth";
import { ledgerFor } from "../ledger/ledger";
import { keyUsageNow, totalsNow } from "../ledger/usage-now";
import { accountLedger } from "../ledger/isolate-ledgers";
import { nanoToUsd } from "../catalog/money";
import { isoOrNull, limitFields, usageFields } from "../keys/present-key";
import { findGeneration } from "../db/generations";
import { presentGeneration } from "./present-generation";
import { findAcrossStages } from "../generations/find-record";
import { findArchived } from "../generations/archive-read";
import { ApiError } from "../request/errors";

/** GET /key, /credits and /generation: the authenticated caller's own key, money and records. */
export const accountRoutes = new Hono<AppEnv>();

/** The legacy `rate_limit` of GET /key: no per-key request limit ("requests": -1). */
const KEY_RATE_LIMIT = { requests: -1, interval: "10s", note: "This field is deprecated and safe to ignore." } as const;

accountRoutes.get("/key", requireKey, async (c) => {
  const { key, accountId } = c.get("caller");
  const [usage, totals] = await Promise.all([keyUsageNow(c.env, accountId, key.hash), totalsNow(c.env, accountId)]);
  return c.json({
    data: {
      label: key.label,
      name: key.name,
      ...usageFields(usage),
      ...limitFields(key, usage), // limit_remaining: in the window limit_reset names
      is_free_tier: !totals.granted,
      is_management_key: key.isManagement,
      is_provisioning_key: key.isManagement, // the contract's deprecated name for the same flag
      disabled: key.disabled,
      creator_user_id: accountId,
      expires_at: isoOrNull(key.expiresAt),
      created_at: new Date(key.createdAt).toISOString(),
      // Deprecated in the contract but required: OpenRouter always answers -1 requests.
      rate_limit: KEY_RATE_LIMIT,
    },
  });
});

accountRoutes.get("/credits", requireKey, async (c) => {
  const totals = await totalsNow(c.env, c.get("caller").accountId);
  return c.json({ data: { total_credits: nanoToUsd(totals.creditsNano), total_usage: nanoToUsd(totals.usageNano) } });
});

const generationQuery = z.object({ id: z.string().regex(/^gen-[0-9a-zA-Z]{1,64}$/) });

accountRoutes.get("/generation", requireKey, async (c) => {
  const parsed = generationQuery.safeParse({ id: c.req.query("id") });
  if (!parsed.success) {
    // 404 either way: the contract documents no 400 for this path, and no id finds no generation.
    if (c.req.query("id") === undefined) throw new ApiError(404, "Generation not found: the query parameter `id` (a generation id, gen-<random>) is missing.");
    throw new ApiError(404, "Generation not found.");
  }
  const { accountId } = c.get("caller");
  const id = parsed.data.id;
  // The ledger's outbox first (a record asked for is most often one settled moments ago). Else, in the order
  // records move: this isolate's unsent settles, the outbox (a record may be stored while we look), D1 (records
  // from before the records queue), R2 through the index (the records queue's parts and the archive's).
  const record = await findAcrossStages(
    [
      async () => accountLedger(c.env, accountId).unsentRecord(id) ?? null,
      () => ledgerFor(c.env, accountId).pendingGeneration(id),
      () => findGeneration(c.env.DB, accountId, id),
      () => findArchived(c.env.DB, c.env.ARCHIVE, accountId, id),
    ],
    1,
  );
  if (!record || record.accountId !== accountId) throw new ApiError(404, "Generation not found.");
  return c.json({ data: presentGeneration(record) });
});
