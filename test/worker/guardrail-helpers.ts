import { expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, newAccount } from "./helpers";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An account with credits, one API key and one management key. */
export async function accountWithManagementKey(credits = 5) {
  const a = await newAccount(credits);
  const m = await admin<{ key: string; hash: string }>("/keys", { account: a.accountId, management: true });
  return { ...a, mgmt: m.key, mgmtHash: m.hash };
}

/** A call of the guardrails API (`/api/v1` + path) with a key. */
export function guardrailsApi(key: string, method: string, path: string, body?: unknown) {
  return call(`/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Creates a guardrail and assigns it to `keyHash`; returns its id. */
export async function guardKey(mgmt: string, keyHash: string, rules: Json, name = "rail"): Promise<string> {
  const created = await guardrailsApi(mgmt, "POST", "/guardrails", { name, ...rules });
  expect(created.status, await created.clone().text()).toBe(201);
  const id = ((await created.json()) as Json).data.id as string;
  const assigned = await guardrailsApi(mgmt, "POST", `/guardrails/${id}/assignments/keys`, { key_hashes: [keyHash] });
  expect(assigned.status).toBe(200);
  return id;
}

/** A POST of a model API with a key. */
export function post(path: string, key: string, body: unknown) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Adds a member (role `member`) to the account, straight in D1 (test set-up); returns its id. */
export async function addMember(accountId: string): Promise<string> {
  const id = `mem_${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`;
  await env.DB.prepare("INSERT INTO members (id, account_id, email, role, created_at) VALUES (?, ?, ?, 'member', ?)")
    .bind(id, accountId, `${id}@example.test`, Date.now())
    .run();
  return id;
}

/** A new API key of the account belonging to `memberId` (as if the member had made it). */
export async function memberKey(accountId: string, memberId: string, name = "member key"): Promise<{ key: string; hash: string }> {
  const k = await admin<{ key: string; hash: string }>("/keys", { account: accountId, name });
  await env.DB.prepare("UPDATE api_keys SET member_id = ? WHERE hash = ?").bind(memberId, k.hash).run();
  return k;
}

/** The id of the account's owner (the member the operator made with the account). */
export const ownerOf = async (accountId: string) =>
  (await env.DB.prepare("SELECT id FROM members WHERE account_id = ? AND role = 'owner'").bind(accountId).first<{ id: string }>())!.id;
