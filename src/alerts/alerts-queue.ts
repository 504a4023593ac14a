import type { Env } from "../env";
import { settings, type Settings } from "../settings";
import { logError, logEvent } from "../log-error";
import { secretBox, type SecretBox } from "../webhooks/secret-box";
import { alertMessageSchema, type AlertEvent, type AlertMessage } from "./events";
import { findEndpoint, listEndpoints, logDelivery } from "./endpoint-store";
import { postSigned } from "./post-signed";

/** Delivery attempts of one alert to one endpoint before it goes to the dead-letter queue (wrangler.toml `max_retries`). */
export const ALERT_DELIVERY_ATTEMPTS = 8;
/** The longest wait between two attempts, seconds. */
const MAX_DELAY_S = 3600;

export type AlertDeps = {
  d1: D1Database;
  queue: Queue<AlertMessage>;
  /** Opens endpoint secrets; null when the deployment has no sealing secret (no endpoint can have been made). */
  box: SecretBox | null;
  fetch: typeof fetch;
  now: () => number;
  settings: Pick<Settings, "ALERT_DELIVERY_LOG_ROWS" | "ALERT_WEBHOOK_TIMEOUT_MS" | "ALERT_RETRY_BASE_S">;
};

export function alertDeps(env: Env): AlertDeps {
  const s = settings(env);
  return { d1: env.DB, queue: env.ALERTS_QUEUE, box: endpointSecretBox(s), fetch: (input, init) => fetch(input, init), now: Date.now, settings: s };
}

/** What seals endpoint secrets: the deployment's sealing secret, and earlier ones to open what they sealed; null when none is set. */
export function endpointSecretBox(s: Pick<Settings, "REASONING_SEAL_KEY" | "REASONING_SEAL_KEYS_PREVIOUS">): SecretBox | null {
  return secretBox(s.REASONING_SEAL_KEY === undefined ? [] : [s.REASONING_SEAL_KEY, ...s.REASONING_SEAL_KEYS_PREVIOUS]);
}

/** The wait before attempt n + 1 after n failed: the base, doubling, at most an hour. */
export function retryDelayS(base: number, attempts: number): number {
  return Math.min(MAX_DELAY_S, base * 2 ** Math.min(Math.max(attempts - 1, 0), 20));
}

/**
 * The alerts queue's consumer. An `event` (a ledger fired an alert) becomes one `deliver` message per
 * endpoint the account has then, so each endpoint's retries are its own; a `deliver` posts the signed event
 * to its endpoint and logs the attempt. A failed attempt is retried with backoff (`message.retry`), the last
 * one goes to the dead-letter queue. Deliveries are at least once: a receiver dedupes by the event's `id`.
 */
export async function consumeAlerts(batch: MessageBatch<unknown>, deps: AlertDeps): Promise<void> {
  for (const message of batch.messages) {
    const parsed = alertMessageSchema.safeParse(message.body);
    if (!parsed.success) {
      logEvent("alerts queue: a message of unknown shape", { message: message.id });
      message.ack(); // never deliverable: retrying it would not change that
      continue;
    }
    const body = parsed.data;
    try {
      const done = body.kind === "event" ? await fanOut(deps, body.event) : await deliver(deps, body.endpointId, body.event, message.attempts);
      if (done) message.ack();
      else message.retry({ delaySeconds: retryDelayS(deps.settings.ALERT_RETRY_BASE_S, message.attempts) });
    } catch (err) {
      logError("alerts queue: a message failed; it is retried", err, { kind: body.kind, event: body.event.id });
      message.retry({ delaySeconds: retryDelayS(deps.settings.ALERT_RETRY_BASE_S, message.attempts) });
    }
  }
}

/** Deliveries that failed every attempt: logged as given up in the account's delivery log. */
export async function consumeDeadAlerts(batch: MessageBatch<unknown>, deps: AlertDeps): Promise<void> {
  for (const message of batch.messages) {
    const parsed = alertMessageSchema.safeParse(message.body);
    if (parsed.success && parsed.data.kind === "deliver") {
      const { endpointId, event } = parsed.data;
      const endpoint = await findEndpoint(deps.d1, event.account_id, endpointId);
      if (endpoint)
        await logDelivery(
          deps.d1,
          entry(event, endpoint.id, endpoint.url, ALERT_DELIVERY_ATTEMPTS, "gave up", null, "every attempt failed", deps.now()),
          deps.settings.ALERT_DELIVERY_LOG_ROWS,
        );
    } else logEvent("alerts queue: a message was dead-lettered", { message: message.id });
    message.ack();
  }
}

/** One delivery message per endpoint of the account (none: the alert is only in the console's list). */
async function fanOut(deps: AlertDeps, event: AlertEvent): Promise<boolean> {
  const endpoints = await listEndpoints(deps.d1, event.account_id);
  if (endpoints.length === 0) return true;
  const named = await withKeyName(deps.d1, event);
  await deps.queue.sendBatch(endpoints.map((e) => ({ body: { v: 1 as const, kind: "deliver" as const, endpointId: e.id, event: named } })));
  return true;
}

/** A key's alert names the key (its name and masked label) as D1 has it when the alert goes out. */
async function withKeyName(d1: D1Database, event: AlertEvent): Promise<AlertEvent> {
  if (event.type !== "key.budget_threshold") return event;
  const key = await d1
    .prepare("SELECT name, label FROM api_keys WHERE hash = ? AND account_id = ?")
    .bind(event.data.key_hash, event.account_id)
    .first<{ name: string; label: string }>();
  return { ...event, data: { ...event.data, key_name: key?.name ?? null, key_label: key?.label ?? null } };
}

/** Posts the event to the endpoint and logs the attempt: true when done (delivered, or the endpoint is gone), false to retry. */
async function deliver(deps: AlertDeps, endpointId: string, event: AlertEvent, attempt: number): Promise<boolean> {
  const endpoint = await findEndpoint(deps.d1, event.account_id, endpointId);
  if (!endpoint) return true; // removed since: nothing to deliver to
  const secret = deps.box ? await deps.box.open(endpoint.secretSealed, endpoint.id) : null;
  const log = (outcome: "delivered" | "failed", status: number | null, error: string | null) =>
    logDelivery(deps.d1, entry(event, endpoint.id, endpoint.url, attempt, outcome, status, error, deps.now()), deps.settings.ALERT_DELIVERY_LOG_ROWS);
  if (secret === null) {
    // Sealed under a key the deployment no longer has: retrying cannot help; the endpoint must be made again.
    await log("failed", null, "the endpoint's secret cannot be opened (the deployment's sealing key changed): remove the endpoint and add it again");
    return true;
  }
  const result = await postSigned(deps.fetch, endpoint.url, secret, event, Math.floor(deps.now() / 1000), deps.settings.ALERT_WEBHOOK_TIMEOUT_MS);
  await log(result.ok ? "delivered" : "failed", result.status, result.error);
  return result.ok;
}

function entry(
  event: AlertEvent,
  endpointId: string,
  url: string,
  attempt: number,
  outcome: "delivered" | "failed" | "gave up",
  status: number | null,
  error: string | null,
  at: number,
) {
  return { accountId: event.account_id, endpointId, url, eventId: event.id, eventType: event.type, attempt, outcome, status, error, at };
}
