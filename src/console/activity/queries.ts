import { asc, eq } from "drizzle-orm";
import { db } from "../../db/client";
import { apiKeys, type Generation, type NewGeneration } from "../../db/schema";
import { matchesFilter } from "../../db/record-filter";
import { storedRecord } from "../../generations/archive-format";
import { sumsBy, sumsOverTime, type Cursor } from "../../db/record-queries";
import { recordsPage, type RecordStores } from "../../generations/record-pages";
import { DAY_MS, type ActivityFilter } from "./filter";

/** Activity reads: the account's generations, newest first, paged by a (created_at, id) cursor, from D1 and the archive. */
export const PAGE_SIZE = 50;
export { DAY_MS } from "./filter";

export type { Cursor };

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
  stores: RecordStores,
  accountId: string,
  page: { before?: Cursor; after?: Cursor },
  filter: ActivityFilter = {},
): Promise<ActivityPage> {
  if (page.after) {
    const { rows, more } = await recordsPage(stores, accountId, filter, "newer", page.after, PAGE_SIZE);
    const shown = rows.reverse();
    return { rows: shown, newer: more && shown[0] ? encodeCursor(shown[0]) : null, older: shown.at(-1) ? encodeCursor(shown.at(-1)!) : null };
  }
  const before = page.before ?? null;
  const { rows: shown, more } = await recordsPage(stores, accountId, filter, "older", before, PAGE_SIZE);
  return {
    rows: shown,
    newer: before && shown[0] ? encodeCursor(shown[0]) : null,
    older: more && shown.at(-1) ? encodeCursor(shown.at(-1)!) : null,
  };
}

/**
 * The newest page with the records still in the account's ledger (settled, not yet stored: a quiet account's
 * reach the store minutes after they settle) merged in, within the filter, the ledger's version of a record
 * winning; the page stays PAGE_SIZE rows, its `older` link after the last one shown.
 */
export function withPending(page: ActivityPage, pending: NewGeneration[], accountId: string, filter: ActivityFilter): ActivityPage {
  const rows = new Map(page.rows.map((g) => [g.id, g]));
  for (const r of pending) {
    const g = storedRecord(r);
    if (g.accountId === accountId && matchesFilter(g, filter)) rows.set(g.id, g);
  }
  const merged = [...rows.values()].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const shown = merged.slice(0, PAGE_SIZE);
  const last = shown.at(-1);
  return { rows: shown, newer: page.newer, older: last && (page.older !== null || merged.length > PAGE_SIZE) ? encodeCursor(last) : null };
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

/** The account's (filtered) spend, requests and tokens per bucket of the view, up to now, zero-filled, oldest first (D1 and the archive). */
export async function spendSeries(d1: D1Database, accountId: string, view: View, now = Date.now(), filter: ActivityFilter = {}): Promise<SpendPoint[]> {
  const { bucketMs, count: buckets, label, axis } = VIEWS[view];
  const current = Math.floor(now / bucketMs);
  const first = current - buckets + 1;
  const byBucket = await sumsOverTime(d1, accountId, filter, bucketMs, first * bucketMs);
  return Array.from({ length: buckets }, (_, i) => {
    const b = first + i;
    const r = byBucket.get(b);
    return {
      label: label(b * bucketMs),
      axis: axis(b * bucketMs),
      costNano: r?.costNano ?? 0,
      requests: r?.requests ?? 0,
      tokensPrompt: r?.tokensPrompt ?? 0,
      tokensCompletion: r?.tokensCompletion ?? 0,
    };
  });
}

/** One line of a breakdown: what it groups by (a model id, a key, a carrier), and its sums. */
export type BreakdownRow = { name: string; requests: number; tokensPrompt: number; tokensCompletion: number; tokensCached: number; costNano: number };
export type Breakdown = { rows: BreakdownRow[]; total: BreakdownRow };

/**
 * The filtered requests summed by model, by API key (named by its name, a deleted key by its hash's start)
 * and by carrier ("" when no carrier served), dearest first, each with its total — from the same records the
 * list shows, so every figure adds up to them.
 */
export async function breakdowns(d1: D1Database, accountId: string, filter: ActivityFilter): Promise<Record<"model" | "key" | "carrier", Breakdown>> {
  const [byModel, byKey, byCarrier, keys] = await Promise.all([
    sumsBy(d1, accountId, filter, "model"),
    sumsBy(d1, accountId, filter, "key"),
    sumsBy(d1, accountId, filter, "carrier"),
    accountKeys(d1, accountId),
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
