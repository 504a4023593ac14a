import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { call, newAccount } from "./helpers";
import { accountWithManagementKey, createPreset, jsonOf, presetsApi, type Json } from "./preset-helpers";

// The presets API: OpenRouter's shapes (the teams contract's Preset, PresetWithDesignatedVersion,
// PresetDesignatedVersion: test/node/presets-contract.test.ts validates them against the file), creation,
// a new version on every save, deletion; management keys only, scoped to the key's account.
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

/** The contract's Preset fields (all required), and our one extra. */
const PRESET_FIELDS = [
  "created_at",
  "creator_user_id",
  "description",
  "designated_version_id",
  "id",
  "latest_version",
  "name",
  "slug",
  "status",
  "status_updated_at",
  "updated_at",
  "workspace_id",
];
const VERSION_FIELDS = ["config", "created_at", "creator_id", "id", "preset_id", "system_prompt", "updated_at", "version"];

async function errorOf(res: Response, status: number): Promise<string> {
  const body = await jsonOf(res, status);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(status);
  return body.error.message as string;
}

describe("the presets API", () => {
  it("creates a preset with version 1 and shows it in the contract's shapes", async () => {
    const a = await accountWithManagementKey();
    const res = await presetsApi(a.mgmt, "POST", "", {
      slug: "support-bot",
      name: "Support bot",
      description: "Answers support tickets",
      config: { model: LLAMA, temperature: 0.3, provider: { only: ["groq"] }, reasoning: { effort: "low" } },
      system_prompt: "Be kind.",
    });
    const created = (await jsonOf(res, 201)).data;
    expect(Object.keys(created).sort()).toEqual([...PRESET_FIELDS, "designated_version"].sort());
    expect(Object.keys(created.designated_version).sort()).toEqual(VERSION_FIELDS);
    expect(created).toMatchObject({
      slug: "support-bot",
      name: "Support bot",
      description: "Answers support tickets",
      status: "active",
      creator_user_id: a.accountId,
      latest_version: 1,
      designated_version_id: created.designated_version.id,
      designated_version: {
        version: 1,
        preset_id: created.id,
        system_prompt: "Be kind.",
        config: { model: LLAMA, temperature: 0.3, provider: { only: ["groq"] }, reasoning: { effort: "low" } },
      },
    });
    const got = (await jsonOf(await presetsApi(a.mgmt, "GET", "/support-bot"), 200)).data;
    expect(got).toEqual(created);
    const list = await jsonOf(await presetsApi(a.mgmt, "GET"), 200);
    expect(list.total_count).toBe(1);
    expect(Object.keys(list.data[0]).sort()).toEqual(PRESET_FIELDS);
    const { designated_version: _v, ...bare } = created;
    expect(list.data[0]).toEqual(bare);
  });

  it("every save is a new version: what a PATCH leaves out is the latest version's; versions are listed oldest first and read one by one", async () => {
    const a = await accountWithManagementKey();
    const v1 = await createPreset(a.mgmt, "ops", { model: LLAMA, temperature: 0.1 }, "First.");
    const v2 = (await jsonOf(await presetsApi(a.mgmt, "PATCH", "/ops", { system_prompt: "Second." }), 200)).data;
    expect(v2.designated_version).toMatchObject({ version: 2, system_prompt: "Second.", config: { model: LLAMA, temperature: 0.1 } });
    const v3 = (await jsonOf(await presetsApi(a.mgmt, "PATCH", "/ops", { name: "Ops", config: { model: LLAMA, top_p: 0.5 } }), 200)).data;
    expect(v3).toMatchObject({
      id: v1.id,
      name: "Ops",
      latest_version: 3,
      designated_version: { version: 3, system_prompt: "Second.", config: { model: LLAMA, top_p: 0.5 } },
    });
    const v4 = (await jsonOf(await presetsApi(a.mgmt, "PUT", "/ops", { system_prompt: null }), 200)).data; // PUT is PATCH
    expect(v4.designated_version).toMatchObject({ version: 4, system_prompt: null, config: { model: LLAMA, top_p: 0.5 } });
    const versions = await jsonOf(await presetsApi(a.mgmt, "GET", "/ops/versions"), 200);
    expect(versions.total_count).toBe(4);
    expect(versions.data.map((v: Json) => [v.version, v.system_prompt, v.config])).toEqual([
      [1, "First.", { model: LLAMA, temperature: 0.1 }],
      [2, "Second.", { model: LLAMA, temperature: 0.1 }],
      [3, "Second.", { model: LLAMA, top_p: 0.5 }],
      [4, null, { model: LLAMA, top_p: 0.5 }],
    ]);
    const page = await jsonOf(await presetsApi(a.mgmt, "GET", "/ops/versions?offset=1&limit=1"), 200);
    expect(page).toMatchObject({ total_count: 4, data: [{ version: 2 }] });
    expect((await jsonOf(await presetsApi(a.mgmt, "GET", "/ops/versions/1"), 200)).data).toEqual(v1.designated_version);
    expect(await errorOf(await presetsApi(a.mgmt, "GET", "/ops/versions/5"), 404)).toMatch(/no version 5: its versions are 1 to 4/);
    expect(await errorOf(await presetsApi(a.mgmt, "GET", "/ops/versions/first"), 404)).toMatch(/no version `first`/);
  });

  it("lists the most recently saved first, paged", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "one", { model: LLAMA });
    await createPreset(a.mgmt, "two", { model: LLAMA });
    await jsonOf(await presetsApi(a.mgmt, "PATCH", "/one", { description: "saved last" }), 200);
    const list = await jsonOf(await presetsApi(a.mgmt, "GET"), 200);
    expect(list.data.map((p: Json) => p.slug)).toEqual(["one", "two"]);
    const page = await jsonOf(await presetsApi(a.mgmt, "GET", "?offset=1&limit=1"), 200);
    expect(page).toMatchObject({ total_count: 2, data: [{ slug: "two" }] });
    expect(await errorOf(await presetsApi(a.mgmt, "GET", "?limit=101"), 400)).toMatch(/`limit`: must be at most 100/);
  });

  it("deletes a preset and its versions", async () => {
    const a = await accountWithManagementKey();
    const tmp = await createPreset(a.mgmt, "tmp", { model: LLAMA });
    await jsonOf(await presetsApi(a.mgmt, "PATCH", "/tmp", { system_prompt: "v2" }), 200);
    expect(await jsonOf(await presetsApi(a.mgmt, "DELETE", "/tmp"), 200)).toEqual({ deleted: true });
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM preset_versions WHERE preset_id = ?").bind(tmp.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
    expect(await errorOf(await presetsApi(a.mgmt, "GET", "/tmp"), 404)).toMatch(/Preset `tmp` not found/);
    expect(await errorOf(await presetsApi(a.mgmt, "GET", "/tmp/versions/1"), 404)).toMatch(/not found/);
    expect(await errorOf(await presetsApi(a.mgmt, "DELETE", "/tmp"), 404)).toMatch(/not found/);
    // The slug is free again: a new preset starts at version 1.
    expect((await createPreset(a.mgmt, "tmp", { model: LLAMA })).designated_version.version).toBe(1);
  });

  it("refuses what it does not take with a 400 naming the field, a second preset of a slug with a 409", async () => {
    const a = await accountWithManagementKey();
    const bad: [unknown, RegExp][] = [
      [{ slug: "x", config: { model: LLAMA, colour: "red" } }, /`config`: Unrecognized key: "colour"/],
      [{ slug: "x", config: { temperature: 5 } }, /`config.temperature`: must be at most 2/],
      [{ slug: "x", config: { provider: { only: "groq" } } }, /`config.provider.only`/],
      [{ slug: "x", config: { model: "@preset/other" } }, /`config.model`: a preset cannot name another preset/],
      [{ slug: "x", config: { messages: [] } }, /`config`: Unrecognized key: "messages"/],
      [{ slug: "Not A Slug", config: {} }, /`slug`: must be 1 to 64 lowercase letters/],
      [{ slug: "x", config: {}, colour: "red" }, /Unrecognized key: "colour"/],
      [{ slug: "x" }, /`config`/],
      ["[1]", /must be a JSON object/],
    ];
    for (const [body, message] of bad) expect(await errorOf(await presetsApi(a.mgmt, "POST", "", body), 400)).toMatch(message);
    await createPreset(a.mgmt, "x", {});
    expect(await errorOf(await presetsApi(a.mgmt, "POST", "", { slug: "x", config: {} }), 409)).toMatch(/exists already/);
    expect(await errorOf(await presetsApi(a.mgmt, "PATCH", "/x", {}), 400)).toMatch(/give at least one of/);
    expect(await errorOf(await presetsApi(a.mgmt, "PATCH", "/x", { config: { top_k: 1.5 } }), 400)).toMatch(/`config.top_k`/);
    // Nothing was saved by the refusals.
    expect((await jsonOf(await presetsApi(a.mgmt, "GET", "/x/versions"), 200)).total_count).toBe(1);
    const huge = "x".repeat(65 * 1024); // within the body limit (the version's limit and 4 KiB), over the version's
    expect(await errorOf(await presetsApi(a.mgmt, "PATCH", "/x", { system_prompt: huge }), 413)).toMatch(/at most 65536 bytes/);
  });

  it("is for management keys of the account only: an API key gets 403, no key 401, another account's preset 404", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "mine", { model: LLAMA });
    expect(await errorOf(await presetsApi(a.key, "GET"), 403)).toMatch(/management keys/);
    expect(await errorOf(await presetsApi(a.key, "POST", "", { slug: "y", config: {} }), 403)).toMatch(/management keys/);
    expect((await call("/api/v1/presets")).status).toBe(401);
    const b = await accountWithManagementKey();
    expect((await jsonOf(await presetsApi(b.mgmt, "GET"), 200)).total_count).toBe(0);
    for (const [method, path, body] of [
      ["GET", "/mine"],
      ["GET", "/mine/versions"],
      ["GET", "/mine/versions/1"],
      ["PATCH", "/mine", { name: "stolen" }],
      ["DELETE", "/mine"],
    ] as const)
      expect(await errorOf(await presetsApi(b.mgmt, method, path, body), 404)).toMatch(/Preset `mine` not found/);
    // b's attempts changed nothing of a's.
    expect((await jsonOf(await presetsApi(a.mgmt, "GET", "/mine"), 200)).data).toMatchObject({ name: "Preset mine", latest_version: 1 });
    // The same slug in another account is another preset.
    await createPreset(b.mgmt, "mine", { model: LLAMA });
    const other = await newAccount(1);
    expect(other.accountId).not.toBe(a.accountId);
  });
});
