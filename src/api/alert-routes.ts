import { Hono, type Context } from "hono";
import * as z from "zod";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import { findApiKey } from "../keys/key-store";
import { ledgerFor } from "../ledger/ledger";
import { nanoToUsd } from "../catalog/money";
import { parseInput } from "./key-management-input";
import { readJsonObject } from "../request/json-body";
import { ApiError } from "../request/errors";
import { addEndpoint, findEndpoint, listDeliveries, listEndpoints, removeEndpoint, type EndpointView } from "../alerts/endpoint-store";
import { parseBalanceAmounts, parseEndpointUrl, parsePercents, type Parsed } from "../alerts/alert-input";
import { endpointSecretBox } from "../alerts/alerts-queue";
import { testEvent, type AlertMessage } from "../alerts/events";
import type { AlertDelivery } from "../db/schema";

/**
 * Budget alerts through the API (docs/teams.md, "Budget alerts"): ours — OpenRouter has no alerts API to
 * follow. Management keys only, as `/keys`; everything scoped to the key's account (another account's
 * endpoint, like an unknown one, is a 404). The same checks as the console's page.
 */
export const alertRoutes = new Hono<AppEnv>();

const managementKey = [requireKey, requireManagementKey] as const;
const MAX_BODY_BYTES = 16 * 1024;
const DEFAULT_LIST = 50;
const accountOf = (c: Context<AppEnv>) => c.get("caller").accountId;
const body = async (c: Context<AppEnv>) => (await readJsonObject(c.req.raw, MAX_BODY_BYTES)).json;
const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).optional() });
const ok = <T>(parsed: Parsed<T>, field: string): T => {
  if ("error" in parsed) throw new ApiError(400, `Invalid request: \`${field}\`: ${parsed.error}`);
  return parsed.ok;
};
const endpointNotFound = () => new ApiError(404, "Webhook endpoint not found.");

const presentEndpoint = (e: EndpointView) => ({ id: e.id, url: e.url, secret_hint: e.secretHint, created_at: new Date(e.createdAt).toISOString() });
const presentDelivery = (d: AlertDelivery) => ({
  endpoint_id: d.endpointId,
  url: d.url,
  event_id: d.eventId,
  event_type: d.eventType,
  attempt: d.attempt,
  outcome: d.outcome,
  status: d.status,
  error: d.error,
  at: new Date(d.at).toISOString(),
});

alertRoutes.get("/alerts/rules", ...managementKey, async (c) => {
  const rules = await ledgerFor(c.env, accountOf(c)).alertRules();
  return c.json({ data: { balance_below_usd: rules.balanceBelowNano.map(nanoToUsd), keys: rules.keyPercents } });
});

alertRoutes.put("/alerts/rules/balance", ...managementKey, async (c) => {
  const input = parseInput(z.strictObject({ thresholds_usd: z.array(z.unknown()) }), await body(c));
  const nano = ok(parseBalanceAmounts(input.thresholds_usd, c.var.settings.ALERT_THRESHOLDS_PER_RULE), "thresholds_usd");
  await ledgerFor(c.env, accountOf(c)).setAlertThresholds(null, nano);
  return c.json({ data: { balance_below_usd: nano.map(nanoToUsd) } });
});

alertRoutes.put("/alerts/rules/keys/:hash", ...managementKey, async (c) => {
  const hash = c.req.param("hash");
  if (!(await findApiKey(c.env.DB, accountOf(c), hash))) throw new ApiError(404, "API key not found (a key hash of this account's API keys).");
  const input = parseInput(z.strictObject({ percents: z.array(z.unknown()) }), await body(c));
  const percents = ok(parsePercents(input.percents, c.var.settings.ALERT_THRESHOLDS_PER_RULE), "percents");
  await ledgerFor(c.env, accountOf(c)).setAlertThresholds(hash, percents);
  return c.json({ data: { key_hash: hash, percents } });
});

alertRoutes.get("/alerts", ...managementKey, async (c) => {
  const q = parseInput(listQuery, c.req.query());
  const fired = await ledgerFor(c.env, accountOf(c)).alertsFired(q.limit ?? DEFAULT_LIST);
  return c.json({ data: fired.map((f) => ({ ...f.event, sent_at: f.sentAt === null ? null : new Date(f.sentAt).toISOString() })) });
});

alertRoutes.get("/alerts/deliveries", ...managementKey, async (c) => {
  const q = parseInput(listQuery, c.req.query());
  return c.json({ data: (await listDeliveries(c.env.DB, accountOf(c), q.limit ?? DEFAULT_LIST)).map(presentDelivery) });
});

alertRoutes.get("/alerts/endpoints", ...managementKey, async (c) => c.json({ data: (await listEndpoints(c.env.DB, accountOf(c))).map(presentEndpoint) }));

alertRoutes.post("/alerts/endpoints", ...managementKey, async (c) => {
  const input = parseInput(z.strictObject({ url: z.string() }), await body(c));
  const url = ok(parseEndpointUrl(input.url), "url");
  const box = endpointSecretBox(c.var.settings);
  if (box === null) throw new ApiError(503, "This deployment cannot store webhook signing secrets: its REASONING_SEAL_KEY secret is not set (docs/deploy.md).");
  const added = await addEndpoint(c.env.DB, box, accountOf(c), url, c.var.settings.ALERT_ENDPOINTS_PER_ACCOUNT, Date.now());
  if ("error" in added) throw new ApiError(400, added.error);
  // The only time the secret is shown.
  return c.json({ data: presentEndpoint(added.endpoint), secret: added.secret }, 201);
});

alertRoutes.delete("/alerts/endpoints/:id", ...managementKey, async (c) => {
  if (!(await removeEndpoint(c.env.DB, accountOf(c), c.req.param("id")))) throw endpointNotFound();
  return c.json({ deleted: true });
});

alertRoutes.post("/alerts/endpoints/:id/test", ...managementKey, async (c) => {
  const endpoint = await findEndpoint(c.env.DB, accountOf(c), c.req.param("id"));
  if (!endpoint) throw endpointNotFound();
  const message: AlertMessage = { v: 1, kind: "deliver", endpointId: endpoint.id, event: testEvent(accountOf(c), Date.now()) };
  await c.env.ALERTS_QUEUE.send(message);
  return c.json({ data: { event_id: message.event.id, queued: true } }, 202);
});
