import { expect } from "vitest";
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
