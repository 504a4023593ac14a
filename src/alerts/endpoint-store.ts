import { and, desc, eq, sql } from "drizzle-orm";
import { db } from "../db/client";
import { alertDeliveries, alertEndpoints, type AlertDelivery, type AlertEndpoint } from "../db/schema";
import { newWebhookSecret } from "../webhooks/sign";
import type { SecretBox } from "../webhooks/secret-box";

/** An endpoint as it is shown: never its secret (shown once, when made). */
export type EndpointView = Pick<AlertEndpoint, "id" | "url" | "secretHint" | "createdAt">;
const VIEW = { id: alertEndpoints.id, url: alertEndpoints.url, secretHint: alertEndpoints.secretHint, createdAt: alertEndpoints.createdAt };

/** The account's webhook endpoints, oldest first. */
export function listEndpoints(d1: D1Database, accountId: string): Promise<EndpointView[]> {
  return db(d1)
    .select(VIEW)
    .from(alertEndpoints)
    .where(eq(alertEndpoints.accountId, accountId))
    .orderBy(alertEndpoints.createdAt, sql`rowid`)
    .all();
}

/** One of the account's endpoints (another account's is not found), with its sealed secret. */
export async function findEndpoint(d1: D1Database, accountId: string, id: string): Promise<AlertEndpoint | undefined> {
  return db(d1)
    .select()
    .from(alertEndpoints)
    .where(and(eq(alertEndpoints.accountId, accountId), eq(alertEndpoints.id, id)))
    .get();
}

export type AddedEndpoint = { endpoint: EndpointView; secret: string } | { error: string };

/**
 * Adds an endpoint with a new signing secret, returned this once (stored sealed: the signer needs it back).
 * Refused past `max` endpoints; the count and the insert are one statement, so two adds at once cannot pass it.
 */
export async function addEndpoint(d1: D1Database, box: SecretBox, accountId: string, url: string, max: number, now: number): Promise<AddedEndpoint> {
  const id = "we_" + crypto.randomUUID().replaceAll("-", "").slice(0, 24);
  const secret = newWebhookSecret();
  const sealed = await box.seal(secret, id);
  const inserted = await d1
    .prepare(
      `INSERT INTO alert_endpoints (id, account_id, url, secret_sealed, secret_hint, created_at)
       SELECT ?, ?, ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM alert_endpoints WHERE account_id = ?) < ?`,
    )
    .bind(id, accountId, url, sealed, secret.slice(-4), now, accountId, max)
    .run();
  if (inserted.meta.changes === 0) return { error: `An account may have at most ${max} webhook endpoints (ALERT_ENDPOINTS_PER_ACCOUNT): remove one first.` };
  return { endpoint: { id, url, secretHint: secret.slice(-4), createdAt: now }, secret };
}

/** Removes one of the account's endpoints; false when it has none of that id. Deliveries already queued for it are dropped. */
export async function removeEndpoint(d1: D1Database, accountId: string, id: string): Promise<boolean> {
  const gone = await db(d1)
    .delete(alertEndpoints)
    .where(and(eq(alertEndpoints.accountId, accountId), eq(alertEndpoints.id, id)))
    .returning({ id: alertEndpoints.id });
  return gone.length > 0;
}

export type DeliveryEntry = Omit<AlertDelivery, "id">;

/** Writes one delivery attempt and drops the account's entries beyond the newest `keep`, in one batch (one transaction). */
export async function logDelivery(d1: D1Database, e: DeliveryEntry, keep: number): Promise<void> {
  await d1.batch([
    d1
      .prepare(
        "INSERT INTO alert_deliveries (account_id, endpoint_id, url, event_id, event_type, attempt, outcome, status, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .bind(e.accountId, e.endpointId, e.url, e.eventId, e.eventType, e.attempt, e.outcome, e.status, e.error, e.at),
    d1
      .prepare(
        "DELETE FROM alert_deliveries WHERE account_id = ?1 AND id < (SELECT id FROM alert_deliveries WHERE account_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
      )
      .bind(e.accountId, keep - 1),
  ]);
}

/** The account's newest delivery attempts, newest first. */
export function listDeliveries(d1: D1Database, accountId: string, limit: number): Promise<AlertDelivery[]> {
  return db(d1).select().from(alertDeliveries).where(eq(alertDeliveries.accountId, accountId)).orderBy(desc(alertDeliveries.id)).limit(limit).all();
}
