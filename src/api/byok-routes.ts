import { Hono, type Context } from "hono";
import * as z from "zod";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import { loadCatalog } from "../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../protocols/outbound";
import { workspaceId } from "../keys/workspace-id";
import { forgetAccountKeys } from "../keys/key-cache";
import { createByok, deleteByok, findByok, listByok, updateByok } from "../byok/byok-store";
import { presentByok } from "./present-byok";
import { byokOptions, byokPageQuery, createByokBody, updateByokBody } from "./byok-input";
import { parseInput } from "./key-management-input";
import { readJsonObject } from "../request/json-body";
import { ApiError } from "../request/errors";

/**
 * The account's own carrier keys (`/byok`, OpenRouter's shape; docs/byok.md), for management keys only.
 * Every lookup is scoped to the management key's account: another account's key is a 404. A key is never
 * answered back, only its last four characters. A change applies at once in this isolate (its cached API
 * keys of the account are forgotten) and within the key cache's TTL elsewhere.
 */
export const byokRoutes = new Hono<AppEnv>();

const managementKey = [requireKey, requireManagementKey] as const;
const MAX_BODY_BYTES = 128 * 1024;

const notFound = () => new ApiError(404, "BYOK key not found.");
const accountOf = (c: Context<AppEnv>) => c.get("caller").accountId;
const body = async (c: Context<AppEnv>) => (await readJsonObject(c.req.raw, MAX_BODY_BYTES)).json;
const noWorkspace = () => new ApiError(400, "Invalid request: `workspace_id`: no such workspace (an account has one workspace, the one its keys show).");

function idParam(c: Context<AppEnv>): string {
  const parsed = z.uuid().safeParse(c.req.param("id"));
  if (!parsed.success) throw notFound();
  return parsed.data.toLowerCase();
}

/** The deployment's keyring: without one, no carrier key can be stored (503). */
function ringOf(c: Context<AppEnv>) {
  const ring = c.var.settings.BYOK_ENCRYPTION_KEYS;
  if (ring.length === 0) throw new ApiError(503, "Bring your own key is not enabled on this deployment (BYOK_ENCRYPTION_KEYS is not set).");
  return ring;
}

/** A key within BYOK_KEY_CHARS. */
function checkedKey(c: Context<AppEnv>, key: string): string {
  const max = c.var.settings.BYOK_KEY_CHARS;
  if (key.length > max) throw new ApiError(400, `Invalid request: \`key\`: at most ${max} characters (BYOK_KEY_CHARS).`);
  return key;
}

/** A carrier of the catalog, by slug (any case). */
async function carrierOf(c: Context<AppEnv>, slug: string): Promise<string> {
  const catalog = await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));
  const found = catalog.providers.find((p) => p.slug === slug.toLowerCase());
  if (!found)
    throw new ApiError(400, `Invalid request: \`provider\`: ${slug} is not a carrier here (one of: ${catalog.providers.map((p) => p.slug).join(", ")}).`);
  return found.slug;
}

async function ownWorkspace(c: Context<AppEnv>, asked: string | undefined): Promise<string> {
  const workspace = await workspaceId(accountOf(c));
  if (asked !== undefined && asked.toLowerCase() !== workspace) throw noWorkspace();
  return workspace;
}

byokRoutes.get("/byok", ...managementKey, async (c) => {
  const q = parseInput(byokPageQuery, c.req.query());
  const workspace = await ownWorkspace(c, q.workspace_id);
  const provider = q.provider === undefined ? undefined : q.provider.toLowerCase();
  const { rows, total } = await listByok(c.env.DB, accountOf(c), { offset: q.offset ?? 0, limit: q.limit ?? 50, provider });
  return c.json({ data: rows.map((k) => presentByok(k, workspace)), total_count: total });
});

byokRoutes.post("/byok", ...managementKey, async (c) => {
  const parsed = parseInput(createByokBody, await body(c));
  const workspace = await ownWorkspace(c, parsed.workspace_id);
  const accountId = accountOf(c);
  const provider = await carrierOf(c, parsed.provider);
  const made = await createByok(c.env.DB, ringOf(c), accountId, provider, checkedKey(c, parsed.key), byokOptions(parsed));
  if (made === "exists")
    throw new ApiError(400, `This account has a key for ${provider} already: replace it with PATCH /api/v1/byok/{id} and \`key\`, or delete it first.`);
  if (made === null) throw new ApiError(503, "Bring your own key is not enabled on this deployment (BYOK_ENCRYPTION_KEYS is not set).");
  forgetAccountKeys(accountId);
  return c.json({ data: presentByok(made, workspace) }, 201);
});

byokRoutes.get("/byok/:id", ...managementKey, async (c) => {
  const k = await findByok(c.env.DB, accountOf(c), idParam(c));
  if (!k) throw notFound();
  return c.json({ data: presentByok(k, await workspaceId(accountOf(c))) });
});

byokRoutes.patch("/byok/:id", ...managementKey, async (c) => {
  const id = idParam(c);
  const parsed = parseInput(updateByokBody, await body(c));
  const accountId = accountOf(c);
  const key = parsed.key === undefined ? {} : { key: checkedKey(c, parsed.key) };
  const k = await updateByok(c.env.DB, parsed.key === undefined ? [] : ringOf(c), accountId, id, { ...byokOptions(parsed), ...key });
  if (!k) throw notFound();
  forgetAccountKeys(accountId);
  return c.json({ data: presentByok(k, await workspaceId(accountId)) });
});

byokRoutes.delete("/byok/:id", ...managementKey, async (c) => {
  const accountId = accountOf(c);
  if (!(await deleteByok(c.env.DB, accountId, idParam(c)))) throw notFound();
  forgetAccountKeys(accountId);
  return c.json({ deleted: true as const });
});
