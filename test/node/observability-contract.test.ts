import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { validateResponse } from "../contract/contract.ts";
import { bearer, newAccount, newManagementKey, startServiceFixture, type ServiceFixture } from "./service-fixture.ts";

// Every response of `/observability/destinations`, success and error, validated against the schemas of
// OpenRouter's teams extract, against the service started as `npm start` starts it.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let f: ServiceFixture;
let mgmt: string;
let apiKey: string;

beforeAll(async () => {
  f = await startServiceFixture("observability-contract");
  const a = await newAccount(f, 5);
  apiKey = a.key;
  mgmt = (await newManagementKey(f, a.id)).key;
});
afterAll(async () => {
  await f?.stop();
});

async function conforms(method: string, path: string, key: string | null, status: number, body?: unknown): Promise<Json> {
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

describe("observability destinations conform to the teams contract", () => {
  it("the validator refuses what the contract does not allow", () => {
    expect(validateResponse("/observability/destinations", "GET", 200, "application/json", { data: [{ name: "x" }], total_count: 1 }, "teams")).not.toEqual([]);
  });

  it("the whole life of a destination, and the errors", async () => {
    const created = await conforms("POST", "/observability/destinations", mgmt, 201, {
      type: "otel-collector",
      name: "Collector",
      config: { endpoint: "https://otel.example.com:4318", headers: { authorization: "Bearer abcdefghijklmnop" } },
      sampling_rate: 0.25,
    });
    const id = created.data.id as string;
    expect(created.data.config.headers).toEqual({ authorization: "Bear...mnop" });
    expect((await conforms("GET", "/observability/destinations", mgmt, 200)).total_count).toBe(1);
    await conforms("GET", `/observability/destinations/${id}`, mgmt, 200);
    expect((await conforms("PATCH", `/observability/destinations/${id}`, mgmt, 200, { enabled: false })).data.enabled).toBe(false);
    const hook = await conforms("POST", "/observability/destinations", mgmt, 201, {
      type: "webhook",
      name: "Hook",
      config: { url: "https://hooks.example.com/x" },
    });
    expect(hook.data.config).toMatchObject({ url: "https://hooks.example.com/x", method: "POST" });
    await conforms("GET", `/observability/destinations/${hook.data.id}`, mgmt, 200);
    expect((await conforms("GET", "/observability/destinations", mgmt, 200)).total_count).toBe(2);
    await conforms("POST", "/observability/destinations", mgmt, 400, { type: "datadog", name: "D", config: {} });
    await conforms("GET", "/observability/destinations", null, 401);
    await conforms("GET", "/observability/destinations/00000000-0000-4000-8000-000000000000", mgmt, 404);
    expect(await conforms("DELETE", `/observability/destinations/${id}`, mgmt, 200)).toEqual({ deleted: true });
    await conforms("DELETE", `/observability/destinations/${id}`, mgmt, 404);
    // An API key is not a management key: the contract's 401 and 403 bodies alike are `{error}`.
    const res = await fetch(`${f.url}/api/v1/observability/destinations`, { headers: bearer(apiKey) });
    expect(res.status).toBe(403);
  });
});
