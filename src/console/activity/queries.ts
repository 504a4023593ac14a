import { and, asc, count, desc, eq, gt, gte, lt, or, sql } from "drizzle-orm";
import { db } from "../../db/client";
import { apiKeys, generations, type Generation } from "../../db/schema";
import { DAY_MS, filterWhere, type ActivityFilter } from "./filter";

/** Activity reads: the account's generations (D1), newest first, paged by a (created_at, id) cursor. */
export const PAGE_SIZE = 50;
export { DAY_MS } from "./filter";

export type Cursor = { at: number; id: string };

export function encodeCursor(g: Pick<Generation, "createdAt" | "id">): string {
  return `${g.createdAt}_${g.id}`;
}

export function decodeCursor(text: string | undefined): Cursor | undefined {
  const m = text === undefined ? null : /^(\d{1,15})_(gen-[0-9A-Za-z]{1,64})$/.exec(text);
  return m ? { at: Number(m[1]), id: m[2]! } : undefined;
}

export type ActivityPage = { rows: Generation[]; newer: string | null; older: string | null };

/** One page of the account's generations: the newest, those older than `before`, or those newer than `after`. */
export async function activityPage(
  d1: D1Database,
  accountId: string,
  page: { before?: Cursor; after?: Cursor },
  filter: ActivityFilter = {},
): Promise<ActivityPage> {
  const mine = filterWhere(accountId, filter);
  const d = db(d1);
  if (page.after) {
    const { at, id } = page.after;
    const rows = await d
      .select()
      .from(generations)
      .where(and(mine, or(gt(generations.createdAt, at), and(eq(generations.createdAt, at), gt(generations.id, id)))))
      .orderBy(asc(generations.createdAt), asc(generations.id))
      .limit(PAGE_SIZE + 1)
      .all();
    const hasNewer = rows.length > PAGE_SIZE;
    const shown = rows.slice(0, PAGE_SIZE).reverse();
    return { rows: shown, newer: hasNewer && shown[0] ? encodeCursor(shown[0]) : null, older: shown.at(-1) ? encodeCursor(shown.at(-1)!) : null };
  }
  const before = page.before;
  const rows = await d
    .select()
    .from(generations)
    .where(before ? and(mine, or(lt(generations.createdAt, before.at), and(eq(generations.createdAt, before.at), lt(generations.id, before.id)))) : mine)
    .orderBy(desc(generations.createdAt), desc(generations.id))
    .limit(PAGE_SIZE + 1)
    .all();
  const shown = rows.slice(0, PAGE_SIZE);
  return {
    rows: shown,
    newer: before && shown[0] ? encodeCursor(shown[0]) : null,
    older: rows.length > PAGE_SIZE && shown.at(-1) ? encodeCursor(shown.at(-1)!) : null,
  };
}

/** One bar of the activity chart: a UTC day or hour, its spend, requests and tokens. */
export type SpendPoint = { label: string; axis: string; costNano: number; requests: number; tokensPrompt: number; tokensCompletion: number };

/** The chart's two views: the last 30 UTC days, or the last 48 hours. */
export const VIEWS = {
  day: {
    bucketMs: DAY_MS,
    count: 30,
    label: (ms: number) => new Date(ms).toISOString().slice(0, 10),
    axis: (ms: number) => new Date(ms).toISOString().slice(5, 10),
  },
  hour: {
    bucketMs: 3_600_000,
    count: 48,
    label: (ms: number) => `${new Date(ms).toISOString().slice(0, 13).replace("T", " ")}:00`,
    axis: (ms: number) => `${new Date(ms).toISOString().slice(11, 13)}h`,
  },
} as const;
export type View = keyof typeof VIEWS;

/** The account's (filtered) spend, requests and tokens per bucket of the view, up to now, zero-filled, oldest first. */
export async function spendSeries(d1: D1Database, accountId: string, view: View, now = Date.now(), filter: ActivityFilter = {}): Promise<SpendPoint[]> {
  const { bucketMs, count: buckets, label, axis } = VIEWS[view];
  const current = Math.floor(now / bucketMs);
  const first = current - buckets + 1;
  const bucket = sql<number>`cast(${generations.createdAt} / ${bucketMs} as integer)`;
  const rows = await db(d1)
    .select({
      bucket,
      cost: sql<number>`coalesce(sum(${generations.costNano}), 0)`.mapWith(Number),
      requests: count(),
      prompt: sql<number>`coalesce(sum(${generations.tokensPrompt}), 0)`.mapWith(Number),
      completion: sql<number>`coalesce(sum(${generations.tokensCompletion}), 0)`.mapWith(Number),
    })
    .from(generations)
    .where(and(filterWhere(accountId, filter), gte(generations.createdAt, first * bucketMs)))
    .groupBy(bucket)
    .all();
  const byBucket = new Map(rows.map((r) => [Number(r.bucket), r]));
  return Array.from({ length: buckets }, (_, i) => {
    const b = first + i;
    const r = byBucket.get(b);
    return {
      label: label(b * bucketMs),
      axis: axis(b * bucketMs),
      costNano: r?.cost ?? 0,
      requests: r?.requests ?? 0,
      tokensPrompt: r?.prompt ?? 0,
      tokensCompletion: r?.completion ?? 0,
    };
  });
}

/** One line of a breakdown: what it groups by (a model id, a key, a carrier), and its sums. */
export type BreakdownRow = { name: string; requests: number; tokensPrompt: number; tokensCompletion: number; tokensCached: number; costNano: number };
export type Breakdown = { rows: BreakdownRow[]; total: BreakdownRow };

const sums = {
  requests: count(),
  tokensPrompt: sql<number>`coalesce(sum(${generations.tokensPrompt}), 0)`.mapWith(Number),
  tokensCompletion: sql<number>`coalesce(sum(${generations.tokensCompletion}), 0)`.mapWith(Number),
  tokensCached: sql<number>`coalesce(sum(${generations.tokensCached}), 0)`.mapWith(Number),
  costNano: sql<number>`coalesce(sum(${generations.costNano}), 0)`.mapWith(Number),
};

/**
 * The filtered requests summed by model, by API key (named by its name, a deleted key by its hash's start)
 * and by carrier (none: no carrier served), dearest first, each with its total — from the same records the
 * list shows, so every figure adds up to them.
 */
export async function breakdowns(d1: D1Database, accountId: string, filter: ActivityFilter): Promise<Record<"model" | "key" | "carrier", Breakdown>> {
  const where = filterWhere(accountId, filter);
  const d = db(d1);
  const [byModel, byKey, byCarrier, keys] = await Promise.all([
    d
      .select({ name: generations.model, ...sums })
      .from(generations)
      .where(where)
      .groupBy(generations.model)
      .all(),
    d
      .select({ name: generations.keyHash, ...sums })
      .from(generations)
      .where(where)
      .groupBy(generations.keyHash)
      .all(),
    d
      .select({ name: sql<string>`coalesce(${generations.providerName}, 'none')`, ...sums })
      .from(generations)
      .where(where)
      .groupBy(generations.providerName)
      .all(),
    d.select({ hash: apiKeys.hash, name: apiKeys.name }).from(apiKeys).where(eq(apiKeys.accountId, accountId)).all(),
  ]);
  const names = new Map(keys.map((k) => [k.hash, k.name]));
  const named = byKey.map((r) => ({ ...r, name: names.get(r.name) ?? `deleted key ${r.name.slice(0, 8)}…` }));
  return { model: summed(byModel), key: summed(named), carrier: summed(byCarrier) };
}

function summed(rows: BreakdownRow[]): Breakdown {
  const total = { name: "Total", requests: 0, tokensPrompt: 0, tokensCompletion: 0, tokensCached: 0, costNano: 0 };
  for (const r of rows) for (const k of ["requests", "tokensPrompt", "tokensCompletion", "tokensCached", "costNano"] as const) total[k] += r[k];
  return { rows: [...rows].sort((a, b) => b.costNano - a.costNano || b.requests - a.requests || a.name.localeCompare(b.name)), total };
}

/** The account's keys for the filter's choice: hash and name. */
export function accountKeys(d1: D1Database, accountId: string): Promise<Array<{ hash: string; name: string }>> {
  return db(d1).select({ hash: apiKeys.hash, name: apiKeys.name }).from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(asc(apiKeys.createdAt)).all();
}

/** One page of the filtered requests, oldest first after `after` (the CSV export walks these). */
export function exportPage(d1: D1Database, accountId: string, filter: ActivityFilter, after: Cursor | null, size: number): Promise<Generation[]> {
  const where = filterWhere(accountId, filter);
  return db(d1)
    .select()
    .from(generations)
    .where(after ? and(where, or(gt(generations.createdAt, after.at), and(eq(generations.createdAt, after.at), gt(generations.id, after.id)))) : where)
    .orderBy(asc(generations.createdAt), asc(generations.id))
    .limit(size)
    .all();
}
