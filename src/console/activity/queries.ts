import { and, asc, count, desc, eq, gt, gte, lt, or, sql } from "drizzle-orm";
import { db } from "../../db/client";
import { generations, type Generation } from "../../db/schema";

/** Activity reads: the account's generations (D1), newest first, paged by a (created_at, id) cursor. */
export const PAGE_SIZE = 50;
export const DAY_MS = 86_400_000;

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
export async function activityPage(d1: D1Database, accountId: string, page: { before?: Cursor; after?: Cursor }): Promise<ActivityPage> {
  const mine = eq(generations.accountId, accountId);
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

export type DaySpend = { day: string; costNano: number; requests: number };

/** The account's spend per UTC day for the last `days` days (today included), zero-filled, oldest first. */
export async function dailySpend(d1: D1Database, accountId: string, days: number, now = Date.now()): Promise<DaySpend[]> {
  const today = Math.floor(now / DAY_MS);
  const first = today - days + 1;
  const dayIndex = sql<number>`cast(${generations.createdAt} / ${DAY_MS} as integer)`;
  const rows = await db(d1)
    .select({ day: dayIndex, cost: sql<number>`coalesce(sum(${generations.costNano}), 0)`.mapWith(Number), requests: count() })
    .from(generations)
    .where(and(eq(generations.accountId, accountId), gte(generations.createdAt, first * DAY_MS)))
    .groupBy(dayIndex)
    .all();
  const byDay = new Map(rows.map((r) => [Number(r.day), r]));
  return Array.from({ length: days }, (_, i) => {
    const d = first + i;
    const r = byDay.get(d);
    return { day: new Date(d * DAY_MS).toISOString().slice(0, 10), costNano: r?.cost ?? 0, requests: r?.requests ?? 0 };
  });
}
