import { and, desc, eq } from "drizzle-orm";
import { db } from "../../db/client";
import { payments, type Payment } from "../../db/schema";

/**
 * Records a payment attempt as pending under the form's one-time id. Returns false when that id was
 * used before (the form was submitted twice), so one form can never add credits twice.
 */
export async function beginPayment(d1: D1Database, p: { id: string; accountId: string; provider: string; amountNano: number }): Promise<boolean> {
  const row = await db(d1)
    .insert(payments)
    .values({ ...p, status: "pending", reference: null, createdAt: Date.now() })
    .onConflictDoNothing()
    .returning({ id: payments.id })
    .get();
  return row !== undefined;
}

export async function finishPayment(d1: D1Database, accountId: string, id: string, status: "succeeded" | "declined" | "failed", reference: string | null): Promise<void> {
  await db(d1)
    .update(payments)
    .set({ status, reference })
    .where(and(eq(payments.id, id), eq(payments.accountId, accountId)));
}

export async function recentPayments(d1: D1Database, accountId: string, limit = 10): Promise<Payment[]> {
  return db(d1).select().from(payments).where(eq(payments.accountId, accountId)).orderBy(desc(payments.createdAt)).limit(limit).all();
}
