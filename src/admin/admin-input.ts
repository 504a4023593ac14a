import * as z from "zod";
import { ApiError } from "../request/errors";
import { findAccount } from "../keys/key-store";
import type { ApiKey } from "../db/schema";
import type { Totals } from "../ledger/contract";
import { nanoToUsd } from "../catalog/money";

// What the operator's API reads and answers: its bodies' schemas, paging, and how accounts and keys are shown.

const usd = z.number().positive().max(1_000_000).finite();
/** A starting balance may be zero (no grant is made then). */
const startingUsd = z.number().min(0).max(1_000_000).finite();
export const createAccountBody = z.object({ email: z.email().max(254), credits: startingUsd.optional() });
export const createKeyBody = z
  .object({ account: z.string().min(1).max(254), label: z.string().min(1).max(100).optional(), limit: usd.optional(), management: z.boolean().optional() })
  .refine((b) => !(b.management && b.limit !== undefined), { message: "a management key runs no completions, so it takes no limit", path: ["limit"] });
/** The operator's own id for a grant (an invoice number, a ticket): the same key grants once. */
const idempotencyKey = z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/, "1 to 100 letters, digits, '.', '_', ':' or '-'");
export const grantBody = z.object({ usd, idempotency_key: idempotencyKey.optional() });
export const keyLimitBody = z.object({ limit: usd.nullable() });
export const hashParam = z.string().regex(/^[0-9a-f]{64}$/);

export async function json<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  const parsed = schema.safeParse(await req.json().catch(() => undefined));
  if (!parsed.success) throw new ApiError(400, `Invalid body: ${parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

export async function accountOr404(d1: D1Database, ref: string) {
  const account = await findAccount(d1, ref);
  if (!account) throw new ApiError(404, `No account ${ref}.`);
  return account;
}

export const presentTotals = (t: Totals) => ({
  total_credits: nanoToUsd(t.creditsNano),
  total_usage: nanoToUsd(t.usageNano),
  balance: nanoToUsd(t.creditsNano - t.usageNano),
  held: nanoToUsd(t.heldNano),
});
export const presentKey = (k: ApiKey) => ({
  hash: k.hash,
  label: k.label,
  name: k.name,
  account_id: k.accountId,
  disabled: k.disabled,
  limit: k.limitNano === null ? null : nanoToUsd(k.limitNano),
  is_management: k.isManagement,
});

/** One page of a list: `offset` from 0, `limit` 1–500 (default 100); `next_offset` null on the last page. */
const pageQuery = z.object({ offset: z.coerce.number().int().min(0).default(0), limit: z.coerce.number().int().min(1).max(500).default(100) });
export function pageOf(c: { req: { query(): Record<string, string> } }) {
  const parsed = pageQuery.safeParse(c.req.query());
  if (!parsed.success) throw new ApiError(400, `Invalid paging: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}
export function page<T>(rows: T[], offset: number, limit: number) {
  // One row beyond the page says whether there is another.
  return { data: rows.slice(0, limit), offset, next_offset: rows.length > limit ? offset + limit : null };
}
