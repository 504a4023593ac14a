import { Hono, type Context } from "hono";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import type { ApiKey } from "../db/schema";
import type { KeyUsage } from "../ledger/contract";
import { MAX_KEYS_PER_ACCOUNT, countAccountKeys, createKey, deleteApiKey, findApiKey, listApiKeys, updateApiKey, type KeyChanges } from "../keys/key-store";
import { keysUsageNow } from "../ledger/usage-now";
import { presentManagedKey } from "../keys/present-key";
import { workspaceId } from "../keys/workspace-id";
import { createKeyBody, keyHash, listKeysQuery, parseInput, readKeyBody, updateKeyBody } from "./key-management-input";
import { ApiError } from "../request/errors";
import { keyScope } from "./actor";

/**
 * The key management API (`/keys`, `/keys/{hash}`), for management keys only (`requireManagementKey`).
 * Everything is scoped to the management key's account; management keys themselves are neither
 * listed nor manageable here (their hashes answer 404, like another account's keys).
 */
export const keyManagementRoutes = new Hono<AppEnv>();

/** Every route here is for management keys only: an API key gets 403, no key 401. */
const managementKey = [requireKey, requireManagementKey] as const;

export const KEYS_PER_PAGE = 100;

const notFound = () => new ApiError(404, "API key not found.");
const accountOf = (c: Context<AppEnv>) => c.get("caller").accountId;

/** Keys as the contract shows them, with their usage from one ledger call. */
async function present(c: Context<AppEnv>, keys: ApiKey[]) {
  const accountId = accountOf(c);
  const none: Record<string, KeyUsage> = {};
  const [usage, workspace] = await Promise.all([
    keys.length
      ? keysUsageNow(
          c.env,
          accountId,
          keys.map((k) => k.hash),
        )
      : none,
    workspaceId(accountId),
  ]);
  return keys.map((k) => presentManagedKey(k, usage[k.hash]!, workspace));
}

/** A `workspace_id` sent by the client must be the account's own (it has exactly one). */
async function checkWorkspace(accountId: string, id: string | undefined) {
  if (id !== undefined && id.toLowerCase() !== (await workspaceId(accountId)))
    throw new ApiError(400, "Invalid request: `workspace_id`: no such workspace (an account has one workspace, the one its keys show).");
}

function hashParam(c: Context<AppEnv>): string {
  const parsed = keyHash.safeParse(c.req.param("hash"));
  if (!parsed.success) throw notFound();
  return parsed.data;
}

keyManagementRoutes.get("/keys", ...managementKey, async (c) => {
  const query = parseInput(listKeysQuery, c.req.query());
  await checkWorkspace(accountOf(c), query.workspace_id);
  const keys = await listApiKeys(
    c.env.DB,
    accountOf(c),
    { includeDisabled: query.include_disabled === "true", offset: query.offset ?? 0, limit: KEYS_PER_PAGE },
    keyScope(c),
  );
  return c.json({ data: await present(c, keys) });
});

keyManagementRoutes.post("/keys", ...managementKey, async (c) => {
  const body = parseInput(createKeyBody, await readKeyBody(c.req.raw));
  const accountId = accountOf(c);
  if (body.creator_user_id != null && body.creator_user_id !== accountId)
    throw new ApiError(400, "Invalid request: `creator_user_id`: must be your own account id (Switchyard has no organizations).");
  await checkWorkspace(accountId, body.workspace_id);
  if ((await countAccountKeys(c.env.DB, accountId)) >= MAX_KEYS_PER_ACCOUNT)
    throw new ApiError(400, `An account can have at most ${MAX_KEYS_PER_ACCOUNT} keys; delete one to create another.`);
  const { key, record } = await createKey(c.env.DB, accountId, body.name, {
    limitNano: body.limit ?? null,
    limitReset: body.limit_reset ?? null,
    includeByokInLimit: body.include_byok_in_limit ?? false,
    expiresAt: body.expires_at ?? null,
    memberId: c.get("caller").actor?.memberId ?? null, // a key made by a management key belongs to that key's member
    answerCacheTtlS: body.response_cache_ttl_seconds ?? null,
  });
  const [data] = await present(c, [record]);
  return c.json({ data, key }, 201); // the only time the key is shown
});

keyManagementRoutes.get("/keys/:hash", ...managementKey, async (c) => {
  const key = await findApiKey(c.env.DB, accountOf(c), hashParam(c), keyScope(c));
  if (!key) throw notFound();
  const [data] = await present(c, [key]);
  return c.json({ data });
});

keyManagementRoutes.patch("/keys/:hash", ...managementKey, async (c) => {
  const hash = hashParam(c);
  const body = parseInput(updateKeyBody, await readKeyBody(c.req.raw));
  const changes: KeyChanges = {
    name: body.name,
    disabled: body.disabled,
    limitNano: body.limit,
    limitReset: body.limit_reset,
    includeByokInLimit: body.include_byok_in_limit,
    answerCacheTtlS: body.response_cache_ttl_seconds,
  };
  const given = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
  const key = await updateApiKey(c.env.DB, accountOf(c), hash, given, keyScope(c));
  if (!key) throw notFound();
  const [data] = await present(c, [key]);
  return c.json({ data });
});

keyManagementRoutes.delete("/keys/:hash", ...managementKey, async (c) => {
  const key = await deleteApiKey(c.env.DB, accountOf(c), hashParam(c), keyScope(c));
  if (!key) throw notFound();
  return c.json({ deleted: true as const });
});
