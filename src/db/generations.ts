import { and, eq, sql } from "drizzle-orm";
import { db } from "./client";
import { generations, type Generation, type NewGeneration } from "./schema";

/**
 * Writes settled generation records. A record replaces one with the same id, so a retried flush is
 * harmless and a late settle replaces the "abandoned" record the ledger wrote when its hold expired.
 */
export async function flushGenerations(d1: D1Database, rows: NewGeneration[]): Promise<void> {
  if (rows.length === 0) return;
  const d = db(d1);
  const [first, ...rest] = rows.map((r) => d.insert(generations).values(r).onConflictDoUpdate({ target: generations.id, set: r }));
  await d.batch([first!, ...rest]);
}

/** One of the account's generations, or undefined; never another account's. */
export async function findGeneration(d1: D1Database, accountId: string, id: string): Promise<Generation | undefined> {
  return db(d1)
    .select()
    .from(generations)
    .where(and(eq(generations.id, id), eq(generations.accountId, accountId)))
    .get();
}

/** Count and summed cost (nano-USD) of an account's generation records in D1. */
export async function generationTotals(d1: D1Database, accountId: string): Promise<{ count: number; costNano: number }> {
  const row = await db(d1)
    .select({ count: sql<number>`count(*)`, costNano: sql<number>`coalesce(sum(${generations.costNano}), 0)` })
    .from(generations)
    .where(eq(generations.accountId, accountId))
    .get();
  return { count: row?.count ?? 0, costNano: row?.costNano ?? 0 };
}
