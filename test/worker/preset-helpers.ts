import { expect } from "vitest";
import { admin, call, newAccount } from "./helpers";

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An account with credits, an API key and a management key (the presets API's). */
export async function accountWithManagementKey(credits = 5) {
  const a = await newAccount(credits);
  const m = await admin<{ key: string }>("/keys", { account: a.accountId, management: true });
  return { ...a, mgmt: m.key };
}

/** A call to the presets API (`/api/v1/presets…`) with `key`. */
export function presetsApi(key: string, method: string, path = "", body?: unknown) {
  return call(`/api/v1/presets${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The answer's JSON, its status checked first (the body in the failure message). */
export async function jsonOf(res: Response, status: number): Promise<Json> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Json;
}

/** Creates a preset through the API; returns what the API answered (`data`). */
export async function createPreset(mgmt: string, slug: string, config: Json, systemPrompt?: string): Promise<Json> {
  const body = { slug, name: `Preset ${slug}`, config, ...(systemPrompt === undefined ? {} : { system_prompt: systemPrompt }) };
  return (await jsonOf(await presetsApi(mgmt, "POST", "", body), 201)).data;
}

/** A model request in one of the chat family's APIs. */
export function post(path: string, key: string, body: unknown) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}
