import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Env } from "../env";
import type { AppEnv } from "../keys/caller";
import { findKeyByHash } from "../keys/key-store";
import { hashApiKey, looksLikeApiKey } from "../keys/api-key";
import { cachedKey, type AuthKey } from "../keys/key-cache";
import { keyGuardrails } from "../keys/guardrail-store";
import { keyByokEntries } from "../byok/byok-store";
import { ApiError } from "../request/errors";
import { currentRole } from "../members/member-store";
import { gate } from "../members/role-gate";
import { API_ROUTES } from "../members/route-actions";
import { audit } from "../members/audit-store";
import { keyActor } from "./actor";

type KeyCheck = AuthKey | { error: string };

/** The key an `Authorization` header presents, or why it is refused. */
async function checkKey(env: Env, header: string | undefined): Promise<KeyCheck> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!match) return { error: "Missing API key: send the header `Authorization: Bearer <key>`." };
  const presented = match[1]!;
  const found = looksLikeApiKey(presented) ? await cachedKey(hashApiKey(presented), (hash) => loadKey(env.DB, hash)) : undefined;
  if (!found) return { error: "Invalid API key." };
  const { key } = found;
  if (key.disabled) return { error: "This API key is disabled." };
  // Compared at every request: the key cache keeps the row, not the verdict.
  if (key.expiresAt !== null && key.expiresAt <= Date.now()) return { error: `This API key expired at ${new Date(key.expiresAt).toISOString()}.` };
  return found;
}

/** A key's row, its guardrails' rules and its account's carrier keys, read together when the key cache misses (the queries at once). */
async function loadKey(d1: D1Database, hash: string): Promise<AuthKey | undefined> {
  const [key, guardrails, byok] = await Promise.all([findKeyByHash(d1, hash), keyGuardrails(d1, hash), keyByokEntries(d1, hash)]);
  return key ? { key, guardrails, byok } : undefined;
}

/**
 * Bearer-key authentication: 401 for a missing, malformed, unknown, disabled or expired key.
 * Keys are looked up by their SHA-256 hash, so the plaintext never reaches storage or logs.
 */
export const requireKey = createMiddleware<AppEnv>(async (c, next) => {
  const checked = await checkKey(c.env, c.req.header("authorization"));
  if ("error" in checked) throw new ApiError(401, checked.error);
  c.set("caller", { key: checked.key, accountId: checked.key.accountId, guardrails: checked.guardrails, byok: checked.byok });
  await next();
});

/**
 * The same for Anthropic's clients, which send their key as `x-api-key` (the Anthropic SDK) or as a
 * Bearer token (Claude Code with ANTHROPIC_AUTH_TOKEN); a refusal is rendered by `refused` (the caller's
 * protocol's error shape).
 */
export function requireKeyOrApiKey(refused: (c: Context<AppEnv>, err: ApiError) => Response) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const apiKey = c.req.header("x-api-key");
    const checked = await checkKey(c.env, c.req.header("authorization") ?? (apiKey === undefined ? undefined : `Bearer ${apiKey}`));
    if ("error" in checked)
      return refused(
        c,
        new ApiError(401, checked.error.replace("send the header `Authorization: Bearer <key>`", "send `x-api-key: <key>` or `Authorization: Bearer <key>`")),
      );
    c.set("caller", { key: checked.key, accountId: checked.key.accountId, guardrails: checked.guardrails, byok: checked.byok });
    await next();
  });
}

/** For public routes that show more to callers with a key: whether the request presents a valid one (no header: no lookup). */
export async function hasValidKey(env: Env, header: string | undefined): Promise<boolean> {
  return header !== undefined && "key" in (await checkKey(env, header));
}

/**
 * After `requireKey`: the management API is for management keys only (403 for any other key), each acting with
 * its member's role as it is now (read at every call: a demotion applies at once; a removed member's key is a
 * 401), held to the route's action (src/members/route-actions.ts: a 403 when the role may not).
 */
export const requireManagementKey = createMiddleware<AppEnv>(async (c, next) => {
  const caller = c.get("caller");
  if (!caller.key.isManagement)
    throw new ApiError(403, "Only management keys can perform this operation. Create a management key on the console's API keys page (Management keys).");
  const actor = await currentRole(c.env.DB, caller.accountId, caller.key.memberId);
  if (!actor) throw new ApiError(401, "Invalid API key.");
  const decided = gate(API_ROUTES, c.req.method, c.req.routePath.replace(/^\/api\/v1(?=\/)/, ""), actor.role);
  if (!decided.ok) throw new ApiError(403, decided.message);
  c.set("caller", { ...caller, actor: { memberId: caller.key.memberId, ...actor } });
  await next();
  // Every change that succeeded goes in the audit log: the route, what its path names, and the key that did it.
  if (c.req.method !== "GET" && c.req.method !== "HEAD" && c.res.status < 400) {
    const target = Object.values(c.req.param()).join(" ") || null;
    await audit(c.env.DB, keyActor(c), `${c.req.method} ${c.req.routePath.replace(/^\/api\/v1(?=\/)/, "")}`, target);
  }
});
