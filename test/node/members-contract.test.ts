import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { validateResponse } from "../contract/contract.ts";
import { bearer, newAccount, newManagementKey, startServiceFixture, type ServiceFixture } from "./service-fixture.ts";

// GET /organization/members held to OpenRouter's teams extract (`openrouter-openapi-teams.yaml`), success and
// errors, against the service started as `npm start` starts it.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let f: ServiceFixture;
let account: { id: string; email: string; key: string };
let mgmt: string;

beforeAll(async () => {
  f = await startServiceFixture("members-contract");
  account = await newAccount(f, 5);
  mgmt = (await newManagementKey(f, account.id)).key;
});
afterAll(async () => {
  await f?.stop();
});

async function check(path: string, key: string | null) {
  const res = await fetch(`${f.url}/api/v1${path}`, { headers: key === null ? {} : bearer(key) });
  const json = (await res.json()) as Json;
  return { status: res.status, json, problems: validateResponse(path, "GET", res.status, res.headers.get("content-type"), json, "teams") };
}

describe("GET /organization/members", () => {
  it("lists the account's members in the contract's shape: the owner the operator made, as org:admin", async () => {
    const c = await check("/organization/members", mgmt);
    expect(c.status).toBe(200);
    expect(c.problems).toEqual([]);
    expect(c.json).toEqual({
      data: [{ id: expect.stringMatching(/^mem_/), email: account.email, first_name: null, last_name: null, role: "org:admin", switchyard_role: "owner" }],
      total_count: 1,
    });
    const paged = await check("/organization/members?offset=1&limit=1", mgmt);
    expect(paged.problems).toEqual([]);
    expect(paged.json).toEqual({ data: [], total_count: 1 });
  });

  it("401 without a key in the contract's shape; 403 for an API key and 400 for a bad limit (statuses it does not list for this path) in the error shape", async () => {
    const none = await check("/organization/members", null);
    expect(none.status).toBe(401);
    expect(none.problems).toEqual([]);
    for (const [path, key, status, says] of [
      ["/organization/members", account.key, 403, "management keys"],
      ["/organization/members?limit=0", mgmt, 400, "limit"],
    ] as const) {
      const c = await check(path, key);
      expect(c.status).toBe(status);
      expect(c.json).toEqual({ error: { code: status, message: expect.stringContaining(says) } });
    }
  });
});
