import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { validateResponse } from "../contract/contract.ts";
import { createHash } from "node:crypto";
import { bearer, newAccount, newManagementKey, postChat, startServiceFixture, type ServiceFixture } from "./service-fixture.ts";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog.ts";
import { costNano } from "../../src/catalog/money.ts";
import { plainUsage } from "../../src/request/usage.ts";
import { byokFeeNano } from "../../src/request/charge.ts";

// Every response of the BYOK API (`/byok`, docs/byok.md), success and error, validated against the schemas
// of OpenRouter's teams extract (`openrouter-openapi-teams.yaml`), against the service started as `npm start` starts it.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let f: ServiceFixture;
let mgmt: string;
let apiKey: { key: string; hash: string };

beforeAll(async () => {
  f = await startServiceFixture("byok-contract");
  const a = await newAccount(f, 5);
  apiKey = a;
  mgmt = (await newManagementKey(f, a.id)).key;
});
afterAll(async () => {
  await f?.stop();
});

async function conforms(method: string, path: string, key: string | null, status: number, body?: unknown) {
  const res = await fetch(`${f.url}/api/v1${path}`, {
    method,
    headers: { ...(key === null ? {} : bearer(key)), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  expect(res.status, JSON.stringify(json)).toBe(status);
  expect(validateResponse(path, method, res.status, res.headers.get("content-type"), json, "teams")).toEqual([]);
  return json;
}

describe("/byok conforms to the teams contract", () => {
  it("the validator refuses what the contract does not allow", () => {
    expect(validateResponse("/byok", "GET", 200, "application/json", { data: [{ provider: "groq" }], total_count: 1 }, "teams")).not.toEqual([]);
    expect(validateResponse("/byok/x", "DELETE", 200, "application/json", { deleted: false }, "teams")).not.toEqual([]);
  });

  it("the whole life of a carrier key: create, list, read, replace, delete", async () => {
    const created = await conforms("POST", "/byok", mgmt, 201, { provider: "groq", key: "gsk_contract_test_WXYZ", name: "prod", mode: "first" });
    const id = created.data.id as string;
    expect(created.data.label).toBe("...WXYZ");
    expect(JSON.stringify(created)).not.toContain("gsk_contract");
    expect((await conforms("GET", "/byok", mgmt, 200)).total_count).toBe(1);
    await conforms("GET", "/byok?offset=0&limit=10&provider=groq", mgmt, 200);
    await conforms("GET", `/byok/${id}`, mgmt, 200);
    await conforms("PATCH", `/byok/${id}`, mgmt, 200, { key: "gsk_contract_rotated_ABCD", allow_fallback: true, name: null });
    expect(await conforms("DELETE", `/byok/${id}`, mgmt, 200)).toEqual({ deleted: true });
  });

  it("errors: 400, 401, 403, 404", async () => {
    await conforms("POST", "/byok", mgmt, 400, { provider: "groq" });
    await conforms("POST", "/byok", mgmt, 400, { provider: "nowhere", key: "k_1234" });
    await conforms("GET", "/byok?limit=1000", mgmt, 400);
    await conforms("PATCH", `/byok/${crypto.randomUUID()}`, mgmt, 400, { colour: "red" });
    await conforms("GET", "/byok", null, 401);
    await conforms("POST", "/byok", apiKey.key, 403, { provider: "groq", key: "k_1234" });
    await conforms("GET", `/byok/${crypto.randomUUID()}`, mgmt, 404);
    await conforms("PATCH", `/byok/${crypto.randomUUID()}`, mgmt, 404, { disabled: true });
    await conforms("DELETE", `/byok/${crypto.randomUUID()}`, mgmt, 404);
  });
});

describe("a BYOK request over real HTTP, against the service as npm start starts it", () => {
  it("reaches the carrier with the account's key, answers the fee as its cost, and within the month's allowance debits nothing", async () => {
    const a = await newAccount(f, 1);
    const m = (await newManagementKey(f, a.id)).key;
    const key = "byok-over-http-deepinfra-0001";
    await conforms("POST", "/byok", m, 201, { provider: "deepinfra", key, mode: "only" });
    const tag = `byok${Date.now()}`;
    const model = "meta-llama/llama-3.1-8b-instruct";
    const res = await postChat(f, a.key, { model, provider: { only: ["deepinfra"] }, messages: [{ role: "user", content: `hi [sim tokens=5 tag=${tag}]` }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    const seen = (await (await fetch(`${f.simulatorUrl}/__sim/requests?tag=${tag}`)).json()) as { requests: Array<{ credential_sha256: string }> };
    expect(seen.requests.map((r) => r.credential_sha256)).toEqual([createHash("sha256").update(key).digest("hex").slice(0, 16)]);
    const endpoint = Catalog.parse(catalogJson)
      .endpoints(model)
      .find((e) => e.provider === "deepinfra")!;
    const fee = byokFeeNano(costNano(plainUsage(body.usage.prompt_tokens, body.usage.completion_tokens, 0), endpoint), 5000);
    expect(Math.round(body.usage.cost * 1e9)).toBe(fee);
    // npm start keeps OpenRouter's allowance (1,000,000 BYOK requests a month free of the fee): nothing is debited.
    // Waits (bounded) until the ledger has stored the request's settle: its usage is then exact.
    const deadline = Date.now() + 15_000;
    const audit = () => f.admin.request<{ records: number; records_pending: number }>("GET", `/accounts/${a.id}/audit`);
    let stored = await audit();
    while (stored.records + stored.records_pending < 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      stored = await audit();
    }
    expect(stored.records + stored.records_pending).toBe(1);
    const t = await f.admin.request<{ total_usage: number }>("GET", `/accounts/${a.id}`);
    expect(t.total_usage).toBe(0);
  });
});
