import { Hono, type Context } from "hono";
import * as z from "zod";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import { loadCatalog } from "../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../protocols/outbound";
import { workspaceId } from "../keys/workspace-id";
import {
  assignKeys,
  countGuardrails,
  createGuardrail,
  deleteGuardrail,
  findGuardrail,
  listAssignments,
  listGuardrails,
  notApiKeys,
  unassignKeys,
  updateGuardrail,
  type GuardrailFields,
  NO_RULES,
} from "../keys/guardrail-store";
import { assignMembers, listMemberAssignments, notMembers, unassignMembers } from "../keys/guardrail-member-store";
import { presentAssignment, presentGuardrail, presentMemberAssignment } from "./present-guardrail";
import { createGuardrailBody, keyHashesBody, memberIdsBody, pageQuery, storedFields, updateGuardrailBody } from "./guardrail-input";
import { parseInput } from "./key-management-input";
import { readJsonObject } from "../request/json-body";
import { ApiError } from "../request/errors";

/**
 * Guardrails on keys (`/guardrails`, their key assignments), OpenRouter's shape, for management keys only.
 * Every lookup is scoped to the management key's account: another account's guardrail is a 404.
 * A guardrail assigned to a member applies to every key of that member (docs/teams.md).
 */
export const guardrailRoutes = new Hono<AppEnv>();

const managementKey = [requireKey, requireManagementKey] as const;
/** A guardrail body with every list full is a few tens of KiB; past this it is refused (413). */
const MAX_BODY_BYTES = 256 * 1024;

const notFound = () => new ApiError(404, "Guardrail not found.");
const accountOf = (c: Context<AppEnv>) => c.get("caller").accountId;
const body = async (c: Context<AppEnv>) => (await readJsonObject(c.req.raw, MAX_BODY_BYTES)).json;

function idParam(c: Context<AppEnv>): string {
  const parsed = z.uuid().safeParse(c.req.param("id"));
  if (!parsed.success) throw notFound();
  return parsed.data.toLowerCase();
}

async function guardrailOf(c: Context<AppEnv>) {
  const g = await findGuardrail(c.env.DB, accountOf(c), idParam(c));
  if (!g) throw notFound();
  return g;
}

/** The page a list asks for, its workspace (if named) the account's own. */
async function pageOf(c: Context<AppEnv>) {
  const q = parseInput(pageQuery, c.req.query());
  if (q.workspace_id !== undefined && q.workspace_id.toLowerCase() !== (await workspaceId(accountOf(c))))
    throw new ApiError(400, "Invalid request: `workspace_id`: no such workspace (an account has one workspace, the one its keys show).");
  return { offset: q.offset ?? 0, limit: q.limit ?? 50 };
}

/** The key hashes of an assignment call: within GUARDRAIL_LIST_ITEMS, each one of the account's API keys (else 404, nothing changed). */
async function keyHashesOf(c: Context<AppEnv>): Promise<string[]> {
  const hashes = [...new Set(parseInput(keyHashesBody, await body(c)).key_hashes)];
  const max = c.var.settings.GUARDRAIL_LIST_ITEMS;
  if (hashes.length > max) throw new ApiError(400, `Invalid request: \`key_hashes\`: at most ${max} per call (GUARDRAIL_LIST_ITEMS).`);
  const unknown = await notApiKeys(c.env.DB, accountOf(c), hashes);
  if (unknown.length) throw new ApiError(404, `API key not found: ${unknown[0]} (a key hash of this account's API keys; management keys carry no guardrails).`);
  return hashes;
}

const fieldsOf = async (c: Context<AppEnv>, parsed: Parameters<typeof storedFields>[0]) =>
  storedFields(parsed, await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p)), c.var.settings.GUARDRAIL_LIST_ITEMS);

guardrailRoutes.get("/guardrails", ...managementKey, async (c) => {
  const { rows, total } = await listGuardrails(c.env.DB, accountOf(c), await pageOf(c));
  const workspace = await workspaceId(accountOf(c));
  return c.json({ data: rows.map((g) => presentGuardrail(g, workspace)), total_count: total });
});

guardrailRoutes.post("/guardrails", ...managementKey, async (c) => {
  const parsed = parseInput(createGuardrailBody, await body(c));
  const accountId = accountOf(c);
  const workspace = await workspaceId(accountId);
  if (parsed.workspace_id !== undefined && parsed.workspace_id.toLowerCase() !== workspace)
    throw new ApiError(400, "Invalid request: `workspace_id`: no such workspace (an account has one workspace, the one its keys show).");
  const max = c.var.settings.GUARDRAILS_PER_ACCOUNT;
  if ((await countGuardrails(c.env.DB, accountId)) >= max)
    throw new ApiError(400, `An account can have at most ${max} guardrails (GUARDRAILS_PER_ACCOUNT); delete one to create another.`);
  const fields: GuardrailFields = {
    ...NO_RULES,
    ...(await fieldsOf(c, parsed)),
    name: parsed.name,
  };
  return c.json({ data: presentGuardrail(await createGuardrail(c.env.DB, accountId, fields), workspace) }, 201);
});

guardrailRoutes.get("/guardrails/assignments/keys", ...managementKey, async (c) => {
  const { rows, total } = await listAssignments(c.env.DB, accountOf(c), null, await pageOf(c));
  return c.json({ data: rows.map(presentAssignment), total_count: total });
});

guardrailRoutes.get("/guardrails/:id", ...managementKey, async (c) => {
  return c.json({ data: presentGuardrail(await guardrailOf(c), await workspaceId(accountOf(c))) });
});

guardrailRoutes.patch("/guardrails/:id", ...managementKey, async (c) => {
  const id = idParam(c);
  const changes = await fieldsOf(c, parseInput(updateGuardrailBody, await body(c)));
  const g = await updateGuardrail(c.env.DB, accountOf(c), id, changes);
  if (!g) throw notFound();
  return c.json({ data: presentGuardrail(g, await workspaceId(accountOf(c))) });
});

guardrailRoutes.delete("/guardrails/:id", ...managementKey, async (c) => {
  if (!(await deleteGuardrail(c.env.DB, accountOf(c), idParam(c)))) throw notFound();
  return c.json({ deleted: true as const });
});

guardrailRoutes.get("/guardrails/:id/assignments/keys", ...managementKey, async (c) => {
  const g = await guardrailOf(c);
  const { rows, total } = await listAssignments(c.env.DB, accountOf(c), g.id, await pageOf(c));
  return c.json({ data: rows.map(presentAssignment), total_count: total });
});

guardrailRoutes.post("/guardrails/:id/assignments/keys", ...managementKey, async (c) => {
  const g = await guardrailOf(c);
  return c.json({ assigned_count: await assignKeys(c.env.DB, accountOf(c), g.id, await keyHashesOf(c)) });
});

guardrailRoutes.post("/guardrails/:id/assignments/keys/remove", ...managementKey, async (c) => {
  const g = await guardrailOf(c);
  return c.json({ unassigned_count: await unassignKeys(c.env.DB, accountOf(c), g.id, await keyHashesOf(c)) });
});

/** The member ids of an assignment call: within GUARDRAIL_LIST_ITEMS, each a member of the account (else 400 naming it, nothing changed). */
async function memberIdsOf(c: Context<AppEnv>): Promise<string[]> {
  const ids = [...new Set(parseInput(memberIdsBody, await body(c)).member_user_ids)];
  const max = c.var.settings.GUARDRAIL_LIST_ITEMS;
  if (ids.length > max) throw new ApiError(400, `Invalid request: \`member_user_ids\`: at most ${max} per call (GUARDRAIL_LIST_ITEMS).`);
  const unknown = await notMembers(c.env.DB, accountOf(c), ids);
  if (unknown.length)
    throw new ApiError(
      400,
      `Invalid request: \`member_user_ids\`: ${unknown[0]} is not a member of this account (GET /api/v1/organization/members lists them).`,
    );
  return ids;
}

guardrailRoutes.get("/guardrails/assignments/members", ...managementKey, async (c) => {
  const { rows, total } = await listMemberAssignments(c.env.DB, accountOf(c), null, await pageOf(c));
  return c.json({ data: rows.map(presentMemberAssignment), total_count: total });
});

guardrailRoutes.get("/guardrails/:id/assignments/members", ...managementKey, async (c) => {
  const g = await guardrailOf(c);
  const { rows, total } = await listMemberAssignments(c.env.DB, accountOf(c), g.id, await pageOf(c));
  return c.json({ data: rows.map(presentMemberAssignment), total_count: total });
});

guardrailRoutes.post("/guardrails/:id/assignments/members", ...managementKey, async (c) => {
  const g = await guardrailOf(c);
  const ids = await memberIdsOf(c);
  return c.json({ assigned_count: await assignMembers(c.env.DB, accountOf(c), g.id, ids, c.get("caller").key.memberId) });
});

guardrailRoutes.post("/guardrails/:id/assignments/members/remove", ...managementKey, async (c) => {
  const g = await guardrailOf(c);
  return c.json({ unassigned_count: await unassignMembers(c.env.DB, accountOf(c), g.id, await memberIdsOf(c)) });
});
