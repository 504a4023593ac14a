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
import { config as collectorConfig, createDestinationBody, refuseUnsupportedType, updateDestinationBody, webhookConfig } from "./observability-input";
import { destinationBox, headerHints, maskSecret, needsSealing, openSecrets, sealSecrets } from "../observability/destination-secrets";
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
 * (a collector's credentials) and a webhook's signing secret are stored sealed and shown masked, from the hints
 * stored beside them (src/observability/destination-secrets.ts); the secret in full only in the create's answer.
 */
export const observabilityRoutes = new Hono<AppEnv>();

const managementKey = [requireKey, requireManagementKey] as const;
const MAX_BODY_BYTES = 128 * 1024;
const DELIVERIES_SHOWN = 100;

const accountOf = (c: Context<AppEnv>) => c.get("caller").accountId;
const notFound = (id: string) => new ApiError(404, `Observability destination \`${id}\` not found.`);
const cannotSeal = () =>
  new ApiError(
    503,
    "This deployment cannot store a destination's secrets (a webhook's signing secret, header values): its REASONING_SEAL_KEY secret is not set (docs/deploy.md). A collector without headers can still be created.",
  );

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error);
}

function present(d: ObservabilityDestination, workspace: string) {
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
    config: configShown(d),
    created_at: new Date(d.createdAt).toISOString(),
    updated_at: new Date(d.updatedAt).toISOString(),
  };
}

/** The config as shown: header values and the signing secret by their stored masks (nothing is opened to show them). */
function configShown(d: ObservabilityDestination) {
  const hints = headerHints(d);
  const shownHeaders = Object.keys(hints).length ? { headers: hints } : {};
  if (d.type === "webhook") return { url: d.endpoint, method: d.method, ...shownHeaders, signing_secret: d.secretHint ?? maskSecret("") };
  return { endpoint: d.endpoint, encoding: d.encoding, ...shownHeaders };
}

/**
 * Headers as given, except a value sent back as its masked form (a GET's config PATCHed back): the stored one
 * stays. Only then are the stored headers opened; the merged headers are sealed again.
 */
async function mergeHeaders(c: Context<AppEnv>, found: ObservabilityDestination, given: Record<string, string> | undefined) {
  const hints = headerHints(found);
  const keeps = ([k, v]: [string, string]) => hints[k] !== undefined && v === hints[k];
  const entries = Object.entries(given ?? {});
  const box = destinationBox(c.var.settings);
  if (entries.length > 0 && !box) throw cannotSeal();
  let stored: Record<string, string> = {};
  if (entries.some(keeps)) {
    const opened = await openSecrets(box, found);
    if (!opened) throw new ApiError(400, "The stored header values no longer open (the key that sealed them is gone): send them in full.");
    stored = opened.headers;
  }
  const headers = Object.fromEntries(entries.map(([k, v]) => [k, keeps([k, v]) ? (stored[k] ?? v) : v]));
  const { headersSealed, headerHints: hinted } = await sealSecrets(box, found.id, { headers, signingSecret: null });
  return { headersSealed, headerHints: hinted };
}

/** A PATCH's config, checked against the destination's kind; header values sent back masked keep the stored ones. */
async function configFields(c: Context<AppEnv>, found: ObservabilityDestination, given: Record<string, unknown>): Promise<Partial<DestinationFields>> {
  if (found.type === "webhook") {
    const w = parse(webhookConfig, given);
    return { endpoint: w.url, method: w.method ?? found.method, ...(await mergeHeaders(c, found, w.headers)) };
  }
  const o = parse(collectorConfig, given);
  return { endpoint: o.endpoint, encoding: o.encoding ?? found.encoding, ...(await mergeHeaders(c, found, o.headers)) };
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
      ? { endpoint: body.config.url, encoding: "json" as const, method: body.config.method ?? "POST" }
      : { endpoint: body.config.endpoint, encoding: body.config.encoding ?? "protobuf", method: "POST" as const };
  // Sealed to the destination's id: it is chosen here. A webhook always has a secret; a collector, its headers if any.
  const id = crypto.randomUUID();
  const secrets = { headers: body.config.headers ?? {}, signingSecret: body.type === "webhook" ? newWebhookSecret() : null };
  const box = destinationBox(c.var.settings);
  if (!box && needsSealing(secrets)) throw cannotSeal();
  const fields: DestinationFields = {
    type: body.type,
    name: body.name,
    enabled: body.enabled ?? true,
    ...target,
    ...(await sealSecrets(box, id, secrets)),
    samplingRate: body.sampling_rate ?? 1,
    apiKeyHashes: body.api_key_hashes ? JSON.stringify(body.api_key_hashes) : null,
    privacyMode: true,
    broadcastCost: body.broadcast_generation_cost ?? false,
    broadcastIdentity: body.broadcast_generation_identity ?? false,
    broadcastRequestContext: body.broadcast_generation_request_context ?? false,
  };
  const max = c.var.settings.OBSERVABILITY_DESTINATIONS_PER_ACCOUNT;
  const created = await createDestination(c.env.DB, id, accountOf(c), fields, max, Date.now());
  if (!created)
    throw new ApiError(
      400,
      `An account can have at most ${max} observability destinations (OBSERVABILITY_DESTINATIONS_PER_ACCOUNT); delete one to create another.`,
    );
  const data = present(created, workspace);
  // The only time a webhook's signing secret is shown in full.
  return c.json({ data: secrets.signingSecret ? { ...data, config: { ...data.config, signing_secret: secrets.signingSecret } } : data }, 201);
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
    ...(body.config !== undefined ? await configFields(c, found, body.config) : {}),
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
