import { Hono, type Context } from "hono";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import { workspaceId } from "../keys/workspace-id";
import { ApiError } from "../request/errors";
import { readJsonObject } from "../request/json-body";
import type { ObservabilityDestination } from "../db/schema";
import { pageQuery } from "./preset-input";
import { createDestinationBody, refuseUnsupportedType, updateDestinationBody } from "./observability-input";
import { addDestination, changeDestination, parseInput as parse, type DestinationScope } from "./observability-changes";
import { shownConfig } from "../observability/destination-secrets";
import { deleteDestination, deliveriesOf, findDestination, listDestinations } from "../observability/destination-store";

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
const scope = (c: Context<AppEnv>): DestinationScope => ({ d1: c.env.DB, settings: c.var.settings, accountId: accountOf(c), now: Date.now() });

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
    config: shownConfig(d),
    created_at: new Date(d.createdAt).toISOString(),
    updated_at: new Date(d.updatedAt).toISOString(),
  };
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
  const { created, signingSecret } = await addDestination(scope(c), body);
  const data = present(created, workspace);
  // The only time a webhook's signing secret is shown in full.
  return c.json({ data: signingSecret ? { ...data, config: { ...data.config, signing_secret: signingSecret } } : data }, 201);
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
  const updated = await changeDestination(scope(c), id, body);
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
