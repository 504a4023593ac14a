import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { validateResponse } from "../contract/contract.ts";
import { SHARED_TEAMS_CONTRACT, VENDORED_TEAMS_CONTRACT } from "../contract/contract-file.ts";
import { bearer, newAccount, newManagementKey, startServiceFixture, type ServiceFixture } from "./service-fixture.ts";

// Every response of the guardrails API and of GET /models/user, success and error, validated against the
// schemas of OpenRouter's teams extract (`openrouter-openapi-teams.yaml`), against the service started as `npm start` starts it.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let f: ServiceFixture;
let mgmt: string;
let apiKey: { key: string; hash: string };

beforeAll(async () => {
  f = await startServiceFixture("guardrails-contract");
  const a = await newAccount(f, 5);
  apiKey = a;
  mgmt = (await newManagementKey(f, a.id)).key;
});
afterAll(async () => {
  await f?.stop();
});

/** One call, its JSON and every way it departs from the teams contract. */
async function check(method: string, path: string, key: string | null, body?: unknown) {
  const res = await fetch(`${f.url}/api/v1${path}`, {
    method,
    headers: { ...(key === null ? {} : bearer(key)), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  return { status: res.status, json, problems: validateResponse(path, method, res.status, res.headers.get("content-type"), json, "teams") };
}

async function conforms(method: string, path: string, key: string | null, status: number, body?: unknown) {
  const c = await check(method, path, key, body);
  expect(c.status, JSON.stringify(c.json)).toBe(status);
  expect(c.problems).toEqual([]);
  return c.json;
}

describe("the teams contract file", () => {
  it.skipIf(!existsSync(SHARED_TEAMS_CONTRACT))("the vendored copy is byte-identical to the shared one", () => {
    expect(readFileSync(VENDORED_TEAMS_CONTRACT).equals(readFileSync(SHARED_TEAMS_CONTRACT))).toBe(true);
  });

  it("the validator refuses what the contract does not allow", () => {
    expect(validateResponse("/guardrails", "GET", 200, "application/json", { data: [{ name: "x" }], total_count: 1 }, "teams")).not.toEqual([]);
    expect(validateResponse("/guardrails/x", "DELETE", 200, "application/json", { deleted: false }, "teams")).not.toEqual([]);
  });
});

describe("guardrails and /models/user conform to the teams contract", () => {
  it("the whole life of a guardrail and its key assignments", async () => {
    const created = await conforms("POST", "/guardrails", mgmt, 201, {
      name: "Prod",
      description: "d",
      allowed_models: ["meta-llama/*"],
      allowed_providers: ["groq", "cerebras"],
      enforce_zdr_other: true,
      max_price: { prompt: 1 },
    });
    const id = created.data.id as string;
    await conforms("GET", "/guardrails", mgmt, 200);
    await conforms("GET", "/guardrails?offset=0&limit=10", mgmt, 200);
    await conforms("GET", `/guardrails/${id}`, mgmt, 200);
    await conforms("PATCH", `/guardrails/${id}`, mgmt, 200, { name: "Prod 2", ignored_providers: ["deepinfra"] });
    expect(await conforms("POST", `/guardrails/${id}/assignments/keys`, mgmt, 200, { key_hashes: [apiKey.hash] })).toEqual({ assigned_count: 1 });
    const listed = await conforms("GET", `/guardrails/${id}/assignments/keys`, mgmt, 200);
    expect(listed.total_count).toBe(1);
    await conforms("GET", "/guardrails/assignments/keys", mgmt, 200);
    const models = await conforms("GET", "/models/user", apiKey.key, 200);
    expect(models.data.every((m: Json) => m.id.startsWith("meta-llama/"))).toBe(true);
    await conforms("POST", `/guardrails/${id}/assignments/keys/remove`, mgmt, 200, { key_hashes: [apiKey.hash] });
    await conforms("DELETE", `/guardrails/${id}`, mgmt, 200);
  });

  it("member assignments: assign, list, unassign", async () => {
    const owner = (await conforms("GET", "/organization/members", mgmt, 200)).data[0].id as string;
    const id = (await conforms("POST", "/guardrails", mgmt, 201, { name: "Team", allowed_models: ["meta-llama/*"] })).data.id as string;
    expect(await conforms("POST", `/guardrails/${id}/assignments/members`, mgmt, 200, { member_user_ids: [owner] })).toEqual({ assigned_count: 1 });
    const listed = await conforms("GET", `/guardrails/${id}/assignments/members`, mgmt, 200);
    expect(listed).toMatchObject({ data: [{ user_id: owner, guardrail_id: id, assigned_by: null }], total_count: 1 });
    expect((await conforms("GET", "/guardrails/assignments/members?offset=0&limit=10", mgmt, 200)).total_count).toBe(1);
    expect(await conforms("POST", `/guardrails/${id}/assignments/members/remove`, mgmt, 200, { member_user_ids: [owner] })).toEqual({ unassigned_count: 1 });
    await conforms("DELETE", `/guardrails/${id}`, mgmt, 200);
  });

  it("errors: 400, 401, 403, 404", async () => {
    await conforms("POST", "/guardrails", mgmt, 400, { name: "x", limit_usd: 5 });
    await conforms("PATCH", `/guardrails/${crypto.randomUUID()}`, mgmt, 400, { colour: "red" });
    await conforms("GET", "/guardrails", null, 401);
    await conforms("GET", "/guardrails", apiKey.key, 403);
    await conforms("POST", "/guardrails", apiKey.key, 403, { name: "x" });
    await conforms("GET", `/guardrails/${crypto.randomUUID()}`, mgmt, 404);
    await conforms("DELETE", `/guardrails/${crypto.randomUUID()}`, mgmt, 404);
    await conforms("GET", `/guardrails/${crypto.randomUUID()}/assignments/keys`, mgmt, 404);
    await conforms("POST", `/guardrails/${crypto.randomUUID()}/assignments/keys`, mgmt, 404, { key_hashes: [apiKey.hash] });
    await conforms("POST", `/guardrails/${crypto.randomUUID()}/assignments/keys/remove`, mgmt, 404, { key_hashes: [apiKey.hash] });
    const g = (await conforms("POST", "/guardrails", mgmt, 201, { name: "m" })).data.id as string;
    await conforms("POST", `/guardrails/${g}/assignments/members`, mgmt, 400, { member_user_ids: ["mem_unknown"] });
    await conforms("POST", `/guardrails/${g}/assignments/members/remove`, mgmt, 400, { member_user_ids: ["mem_unknown"] });
    await conforms("GET", `/guardrails/${crypto.randomUUID()}/assignments/members`, mgmt, 404);
    await conforms("POST", `/guardrails/${crypto.randomUUID()}/assignments/members`, mgmt, 404, { member_user_ids: ["mem_unknown"] });
    await conforms("GET", "/guardrails/assignments/members", null, 401);
    await conforms("GET", "/models/user", null, 401);
  });
});
