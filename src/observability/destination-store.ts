import { and, count, desc, eq, sql } from "drizzle-orm";
import { db } from "../db/client";
import { observabilityDeliveries, observabilityDestinations, type ObservabilityDestination } from "../db/schema";
import type { SealedSecrets } from "./destination-secrets";

/** An account's observability destinations in D1; every read and write scoped to the account. */

export type DestinationFields = Omit<ObservabilityDestination, "id" | "accountId" | "createdAt" | "updatedAt">;

export async function listDestinations(
  d1: D1Database,
  accountId: string,
  offset: number,
  limit: number,
): Promise<{ rows: ObservabilityDestination[]; total: number }> {
  const q = db(d1);
  const where = eq(observabilityDestinations.accountId, accountId);
  const [rows, [total]] = await Promise.all([
    q
      .select()
      .from(observabilityDestinations)
      .where(where)
      .orderBy(observabilityDestinations.createdAt, observabilityDestinations.id)
      .limit(limit)
      .offset(offset),
    q.select({ n: count() }).from(observabilityDestinations).where(where),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** The account's destinations that are on: what a records batch is exported to. */
export function enabledDestinations(d1: D1Database, accountId: string): Promise<ObservabilityDestination[]> {
  return db(d1)
    .select()
    .from(observabilityDestinations)
    .where(and(eq(observabilityDestinations.accountId, accountId), eq(observabilityDestinations.enabled, true)));
}

export async function findDestination(d1: D1Database, accountId: string, id: string): Promise<ObservabilityDestination | undefined> {
  const [row] = await db(d1)
    .select()
    .from(observabilityDestinations)
    .where(and(eq(observabilityDestinations.accountId, accountId), eq(observabilityDestinations.id, id)));
  return row;
}

/** Creates one unless the account has `max` already (one statement: two creates at once cannot pass the limit together). */
export async function createDestination(
  d1: D1Database,
  id: string,
  accountId: string,
  fields: DestinationFields,
  max: number,
  now: number,
): Promise<ObservabilityDestination | null> {
  const row: ObservabilityDestination = { id, accountId, ...fields, createdAt: now, updatedAt: now };
  const cols = Object.keys(row).map((k) => observabilityDestinations[k as keyof ObservabilityDestination].name);
  const values = Object.values(row).map((v) => (typeof v === "boolean" ? Number(v) : v));
  const res = await d1
    .prepare(
      `INSERT INTO observability_destinations (${cols.join(", ")}) SELECT ${cols.map(() => "?").join(", ")} WHERE (SELECT count(*) FROM observability_destinations WHERE account_id = ?) < ?`,
    )
    .bind(...values, accountId, max)
    .run();
  return res.meta.changes === 1 ? row : null;
}

export async function updateDestination(
  d1: D1Database,
  accountId: string,
  id: string,
  fields: Partial<DestinationFields>,
  now: number,
): Promise<ObservabilityDestination | undefined> {
  const [row] = await db(d1)
    .update(observabilityDestinations)
    .set({ ...fields, updatedAt: now })
    .where(and(eq(observabilityDestinations.accountId, accountId), eq(observabilityDestinations.id, id)))
    .returning();
  return row;
}

/** Seals in place the secrets of a row written before sealing, unless its headers changed meanwhile (a PATCH seals its own). */
export async function resealDestination(d1: D1Database, d: ObservabilityDestination, sealed: SealedSecrets): Promise<void> {
  await db(d1)
    .update(observabilityDestinations)
    .set(sealed)
    .where(
      and(
        eq(observabilityDestinations.accountId, d.accountId),
        eq(observabilityDestinations.id, d.id),
        eq(observabilityDestinations.headersSealed, d.headersSealed),
      ),
    );
}

export async function deleteDestination(d1: D1Database, accountId: string, id: string): Promise<boolean> {
  const rows = await db(d1)
    .delete(observabilityDestinations)
    .where(and(eq(observabilityDestinations.accountId, accountId), eq(observabilityDestinations.id, id)))
    .returning({ id: observabilityDestinations.id });
  return rows.length > 0;
}

export type Delivery = typeof observabilityDeliveries.$inferInsert;

/** Logs one delivery attempt and drops the account's rows beyond the newest `keep`, in one batch. */
export async function logDelivery(d1: D1Database, delivery: Delivery, keep: number): Promise<void> {
  const q = db(d1);
  await q.batch([
    q.insert(observabilityDeliveries).values(delivery),
    q
      .delete(observabilityDeliveries)
      .where(
        and(
          eq(observabilityDeliveries.accountId, delivery.accountId),
          sql`${observabilityDeliveries.id} <= (SELECT id FROM observability_deliveries WHERE account_id = ${delivery.accountId} ORDER BY id DESC LIMIT 1 OFFSET ${keep})`,
        ),
      ),
  ]);
}

export function deliveriesOf(d1: D1Database, accountId: string, destinationId: string, limit: number) {
  return db(d1)
    .select()
    .from(observabilityDeliveries)
    .where(and(eq(observabilityDeliveries.accountId, accountId), eq(observabilityDeliveries.destinationId, destinationId)))
    .orderBy(desc(observabilityDeliveries.id))
    .limit(limit);
}
