import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { validateResponse, validateSchema } from "../contract/contract.ts";
import { bearer, newAccount, newManagementKey, postChat, startServiceFixture, waitForGeneration, type ServiceFixture } from "./service-fixture.ts";

// Every /presets operation OpenRouter's teams contract defines (list, get, list versions, get a version),
// success and error, validated against that file's schemas, against the service started as `npm start`
// starts it; create and save (which the contract does not define) answer its PresetWithDesignatedVersion;
// a generation made through a preset validates against the main contract with its preset_id.
let f: ServiceFixture;
let mgmt: string;
let key: string;
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

beforeAll(async () => {
  f = await startServiceFixture("presets-contract");
  const a = await newAccount(f, 5);
  key = a.key;
  mgmt = (await newManagementKey(f, a.id)).key;
});
afterAll(async () => {
  await f?.stop();
});

async function api(method: string, path: string, auth: string | null, body?: unknown) {
  const res = await fetch(`${f.url}/api/v1${path}`, {
    method,
    headers: { ...(auth ? bearer(auth) : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, contentType: res.headers.get("content-type"), json: (await res.json()) as Record<string, unknown> };
}

describe("presets against OpenRouter's teams contract", () => {
  it("create and save answer the contract's PresetWithDesignatedVersion; every defined operation conforms, errors too", async () => {
    const created = await api("POST", "/presets", mgmt, {
      slug: "contract",
      name: "Contract",
      config: { model: LLAMA, temperature: 0.5, provider: { sort: "price" } },
      system_prompt: "Be brief.",
    });
    expect(created.status).toBe(201);
    expect(validateSchema("GetPresetResponse", created.json, "teams")).toEqual([]);
    expect(validateSchema("GetPresetResponse", { data: { id: 1 } }, "teams")).not.toEqual([]); // the validator does refuse
    const saved = await api("PATCH", "/presets/contract", mgmt, { description: "second", config: { model: LLAMA } });
    expect(saved.status).toBe(200);
    expect(validateSchema("GetPresetResponse", saved.json, "teams")).toEqual([]);

    const cases: [string, number, string | null][] = [
      ["/presets", 200, mgmt],
      ["/presets?offset=0&limit=1", 200, mgmt],
      ["/presets/contract", 200, mgmt],
      ["/presets/contract/versions", 200, mgmt],
      ["/presets/contract/versions/2", 200, mgmt],
      ["/presets?limit=0", 400, mgmt],
      ["/presets/contract/versions?offset=x", 400, mgmt],
      ["/presets", 401, null],
      ["/presets/ghost", 404, mgmt],
      ["/presets/ghost/versions", 404, mgmt],
      ["/presets/contract/versions/9", 404, mgmt],
    ];
    for (const [path, status, auth] of cases) {
      const r = await api("GET", path, auth);
      expect(r.status, `${path}: ${JSON.stringify(r.json)}`).toBe(status);
      expect(validateResponse(path, "GET", r.status, r.contentType, r.json, "teams"), path).toEqual([]);
    }
  });

  it("the generation of a request naming a preset carries its preset_id, as the main contract's GenerationResponse has it", async () => {
    const created = await api("POST", "/presets", mgmt, { slug: "recorded", config: { model: LLAMA } });
    const res = await postChat(f, key, { model: "@preset/recorded", messages: [{ role: "user", content: "hi [sim tokens=2]" }] });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    const gen = await waitForGeneration(f, key, res.headers.get("x-generation-id")!);
    const json = (await gen.json()) as { data: Record<string, unknown> };
    expect(validateResponse("/generation", "GET", 200, gen.headers.get("content-type"), json)).toEqual([]);
    expect(json.data).toMatchObject({ preset_id: (created.json.data as { id: string }).id, preset: "recorded", preset_version: 1, model: LLAMA });
  });
});
