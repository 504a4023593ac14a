import { and, eq } from "drizzle-orm";
import { db } from "./client";
import { generations, type Generation, type NewGeneration } from "./schema";

/** Inserts settled generation records; ids already present are left alone, so a retried flush is harmless. */
export async function flushGenerations(d1: D1Database, rows: NewGeneration[]): Promise<void> {
  if (rows.length === 0) return;
  const d = db(d1);
  const [first, ...rest] = rows.map((r) => d.insert(generations).values(r).onConflictDoNothing());
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
