import { and, eq, getTableColumns, getTableName, sql } from "drizzle-orm";
import { db } from "./client";
import { generations, type Generation, type NewGeneration } from "./schema";

// The ledger flushes records in batches of hundreds: one upsert statement, built once from the drizzle
// table (the single source of column names), bound per row — no query building per record.
const COLUMNS = Object.entries(getTableColumns(generations));
const UPSERT_SQL =
  `INSERT INTO "${getTableName(generations)}" (${COLUMNS.map(([, c]) => `"${c.name}"`).join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")}) ` +
  `ON CONFLICT ("${generations.id.name}") DO UPDATE SET ${COLUMNS.filter(([, c]) => c !== generations.id)
    .map(([, c]) => `"${c.name}" = excluded."${c.name}"`)
    .join(", ")}`;

function bindRow(row: NewGeneration): unknown[] {
  return COLUMNS.map(([key, column]) => {
    const value = row[key as keyof NewGeneration] ?? (column.hasDefault ? column.default : null);
    return value === null || value === undefined ? null : column.mapToDriverValue(value);
  });
}

/**
 * Writes settled generation records. A record replaces one with the same id, so a retried flush is
 * harmless and a late settle replaces the "abandoned" record the ledger wrote when its hold expired.
 */
export async function flushGenerations(d1: D1Database, rows: NewGeneration[]): Promise<void> {
  if (rows.length === 0) return;
  const statement = d1.prepare(UPSERT_SQL);
  await d1.batch(rows.map((r) => statement.bind(...bindRow(r))));
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
