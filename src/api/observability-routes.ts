import { Hono, type Context } from "hono";
import * as z from "zod";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import { workspaceId } from "../keys/workspace-id";
import { ApiError } from "../request/errors";
import { invalidInput, readJsonObject } from "../request/json-body";
import type { ObservabilityDestination } from "../db/schema";
import { pageQuery } from "./preset-input";
import { newWebhookSecret } from "../webhooks/sign";
import {
  config as collectorConfig,
  createDestinationBody,
  maskSecret,
  refuseUnsupportedType,
  updateDestinationBody,
  webhookConfig,
} from "./observability-input";
import {
  createDestination,
  deleteDestination,
  deliveriesOf,
  findDestination,
  listDestinations,
  updateDestination,
  type DestinationFields,
} from "../observability/destination-store";

/**
 * Observability destinations (docs/observability.md): OpenRouter's `/observability/destinations` for the kinds
 * Switchyard exports to, and each destination's delivery log. Management keys only, as `/keys`; everything
 * scoped to the key's account (another account's destination is a 404, as an unknown one). Header values
 * (a collector's credentials) are never shown in full.
 */
export const observabilityRoutes = new Hono<AppEnv>();

const managementKey = [requireKey, requireManagementKey] as const;
const MAX_BODY_BYTES = 128 * 1024;
const DELIVERIES_SHOWN = 100;

const accountOf = (c: Context<AppEnv>) => c.get("caller").accountId;
const notFound = (id: string) => new ApiError(404, `Observability destination \`${id}\` not found.`);

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error);
}

function present(d: ObservabilityDestination, workspace: string) {
  const headers = JSON.parse(d.headers) as Record<string, string>;
  return {
    id: d.id,
    workspace_id: workspace,
    type: d.type,
    name: d.name,
    enabled: d.enabled,
    privacy_mode: d.privacyMode,
    broadcast_generation_cost: d.broadcastCost,
    broadcast_generation_identity: d.broadcastIdentity,
    broadcast_generation_request_context: d.broadcastRequestContext,
    sampling_rate: d.samplingRate,
    api_key_hashes: d.apiKeyHashes === null ? null : (JSON.parse(d.apiKeyHashes) as string[]),
    filter_rules: null,
    config: configShown(d, headers),
    created_at: new Date(d.createdAt).toISOString(),
    updated_at: new Date(d.updatedAt).toISOString(),
  };
}

function configShown(d: ObservabilityDestination, headers: Record<string, string>) {
  const shownHeaders = Object.keys(headers).length ? { headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskSecret(v)])) } : {};
  if (d.type === "webhook") return { url: d.endpoint, method: d.method, ...shownHeaders, signing_secret: maskSecret(d.signingSecret ?? "") };
  return { endpoint: d.endpoint, encoding: d.encoding, ...shownHeaders };
}

/** Headers as given, except a value sent back as its masked form (a GET's config PATCHed back): the stored one stays. */
function mergeHeaders(given: Record<string, string> | undefined, stored: Record<string, string>): Record<string, string> {
  if (!given) return {};
  return Object.fromEntries(Object.entries(given).map(([k, v]) => [k, stored[k] !== undefined && v === maskSecret(stored[k]) ? stored[k] : v]));
}

/** A PATCH's config, checked against the destination's kind; header values sent back masked keep the stored ones. */
function configFields(found: ObservabilityDestination, given: Record<string, unknown>): Partial<DestinationFields> {
  const stored = JSON.parse(found.headers) as Record<string, string>;
  if (found.type === "webhook") {
    const w = parse(webhookConfig, given);
    return { endpoint: w.url, method: w.method ?? found.method, headers: JSON.stringify(mergeHeaders(w.headers, stored)) };
  }
  const o = parse(collectorConfig, given);
  return { endpoint: o.endpoint, encoding: o.encoding ?? found.encoding, headers: JSON.stringify(mergeHeaders(o.headers, stored)) };
}

async function checkWorkspace(c: Context<AppEnv>, given: string | undefined): Promise<string> {
  const own = await workspaceId(accountOf(c));
  if (given !== undefined && given !== own) throw new ApiError(404, `Workspace \`${given}\` not found.`);
  return own;
}

observabilityRoutes.get("/observability/destinations", ...managementKey, async (c) => {
  const { workspace_id, ...page } = c.req.query();
  const q = parse(pageQuery, page);
  const workspace = await checkWorkspace(c, workspace_id);
  const { rows, total } = await listDestinations(c.env.DB, accountOf(c), q.offset ?? 0, q.limit ?? 50);
  return c.json({ data: rows.map((d) => present(d, workspace)), total_count: total });
});

observabilityRoutes.post("/observability/destinations", ...managementKey, async (c) => {
  const { json } = await readJsonObject(c.req.raw, MAX_BODY_BYTES);
  refuseUnsupportedType(json);
  const body = parse(createDestinationBody, json);
  const workspace = await checkWorkspace(c, body.workspace_id);
  const target =
    body.type === "webhook"
      ? { endpoint: body.config.url, encoding: "json" as const, method: body.config.method ?? "POST", signingSecret: newWebhookSecret() }
      : { endpoint: body.config.endpoint, encoding: body.config.encoding ?? "protobuf", method: "POST" as const, signingSecret: null };
  const fields: DestinationFields = {
    type: body.type,
    name: body.name,
    enabled: body.enabled ?? true,
    ...target,
    headers: JSON.stringify(body.config.headers ?? {}),
    samplingRate: body.sampling_rate ?? 1,
    apiKeyHashes: body.api_key_hashes ? JSON.stringify(body.api_key_hashes) : null,
    privacyMode: true,
    broadcastCost: body.broadcast_generation_cost ?? false,
    broadcastIdentity: body.broadcast_generation_identity ?? false,
    broadcastRequestContext: body.broadcast_generation_request_context ?? false,
  };
  const max = c.var.settings.OBSERVABILITY_DESTINATIONS_PER_ACCOUNT;
  const created = await createDestination(c.env.DB, accountOf(c), fields, max, Date.now());
  if (!created)
    throw new ApiError(
      400,
      `An account can have at most ${max} observability destinations (OBSERVABILITY_DESTINATIONS_PER_ACCOUNT); delete one to create another.`,
    );
  const data = present(created, workspace);
  // The only time a webhook's signing secret is shown in full.
  return c.json({ data: created.signingSecret ? { ...data, config: { ...data.config, signing_secret: created.signingSecret } } : data }, 201);
});

observabilityRoutes.get("/observability/destinations/:id", ...managementKey, async (c) => {
  const id = c.req.param("id");
  const found = await findDestination(c.env.DB, accountOf(c), id);
  if (!found) throw notFound(id);
  return c.json({ data: present(found, await workspaceId(found.accountId)) });
});

observabilityRoutes.patch("/observability/destinations/:id", ...managementKey, async (c) => {
  const id = c.req.param("id");
  const { json } = await readJsonObject(c.req.raw, MAX_BODY_BYTES);
  const body = parse(updateDestinationBody, json);
  const found = await findDestination(c.env.DB, accountOf(c), id);
  if (!found) throw notFound(id);
  const fields: Partial<DestinationFields> = {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(body.sampling_rate !== undefined ? { samplingRate: body.sampling_rate } : {}),
    ...(body.api_key_hashes !== undefined ? { apiKeyHashes: body.api_key_hashes === null ? null : JSON.stringify(body.api_key_hashes) } : {}),
    ...(body.broadcast_generation_cost !== undefined ? { broadcastCost: body.broadcast_generation_cost } : {}),
    ...(body.broadcast_generation_identity !== undefined ? { broadcastIdentity: body.broadcast_generation_identity } : {}),
    ...(body.broadcast_generation_request_context !== undefined ? { broadcastRequestContext: body.broadcast_generation_request_context } : {}),
    ...(body.config !== undefined ? configFields(found, body.config) : {}),
  };
  const updated = await updateDestination(c.env.DB, accountOf(c), id, fields, Date.now());
  if (!updated) throw notFound(id);
  return c.json({ data: present(updated, await workspaceId(updated.accountId)) });
});

observabilityRoutes.delete("/observability/destinations/:id", ...managementKey, async (c) => {
  const id = c.req.param("id");
  if (!(await deleteDestination(c.env.DB, accountOf(c), id))) throw notFound(id);
  return c.json({ deleted: true as const });
});

/** Not in the contract: the destination's newest delivery attempts (the account keeps OBSERVABILITY_DELIVERY_LOG_ROWS). */
observabilityRoutes.get("/observability/destinations/:id/deliveries", ...managementKey, async (c) => {
  const id = c.req.param("id");
  if (!(await findDestination(c.env.DB, accountOf(c), id))) throw notFound(id);
  const rows = await deliveriesOf(c.env.DB, accountOf(c), id, DELIVERIES_SHOWN);
  return c.json({
    data: rows.map((r) => ({ at: new Date(r.at).toISOString(), spans: r.spans, attempt: r.attempt, status: r.status, outcome: r.outcome })),
  });
});
