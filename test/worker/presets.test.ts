import { describe, it, expect } from "vitest";
import { generation, newAccount } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { accountWithManagementKey, createPreset, jsonOf, post, presetsApi, type Json } from "./preset-helpers";

// `model: "@preset/<slug>"` on chat, messages and responses: the preset's version fills what the request
// leaves unset before routing, the request's own fields win, the record names preset and version.
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const GPT_OSS = "openai/gpt-oss-20b";
const SYSTEM = "You answer for the platform team.";
const CONFIG = { model: LLAMA, temperature: 0.25, max_tokens: 77, provider: { only: ["cerebras"] }, seed: 7 };

/** A request of each API with `model`, its user text and extra fields in that API's words. */
const REQUESTS = {
  chat: (model: string, text: string, extra: Json = {}) => ({
    path: "/chat/completions",
    body: { model, messages: [{ role: "user", content: text }], ...extra },
  }),
  messages: (model: string, text: string, extra: Json = {}) => ({
    path: "/messages",
    // Anthropic's API requires max_tokens: the request's own cap wins over the preset's.
    body: { model, max_tokens: 50, messages: [{ role: "user", content: text }], ...extra },
  }),
  responses: (model: string, text: string, extra: Json = {}) => ({ path: "/responses", body: { model, input: [{ role: "user", content: text }], ...extra } }),
};
type Api = keyof typeof REQUESTS;

async function answered(res: Response, stream: boolean): Promise<string> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  if (stream) expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
  return text;
}

describe("a preset applied on every inbound API", () => {
  for (const api of Object.keys(REQUESTS) as Api[])
    for (const stream of [false, true])
      it(`${api} (${stream ? "stream" : "non-stream"}): the preset's model, parameters, provider and system prompt; the record names preset and version`, async () => {
        const a = await accountWithManagementKey();
        const created = await createPreset(a.mgmt, "team", CONFIG, SYSTEM);
        const tag = uniqueTag();
        const { path, body } = REQUESTS[api]("@preset/team", `Hello [sim tokens=3 tag=${tag}]`, stream ? { stream: true } : {});
        const res = await post(path, a.key, body);
        const text = await answered(res, stream);
        expect(text).toContain(LLAMA); // the answer names the preset's model
        const [sent] = await simRequests(tag);
        expect(sent!.carrier).toBe("cerebras");
        expect(sent!.body).toMatchObject({ temperature: 0.25, seed: 7, max_tokens: api === "messages" ? 50 : 77 });
        expect(sent!.body.messages[0]).toEqual({ role: "system", content: SYSTEM });
        expect(sent!.body.messages[1]).toMatchObject({ role: "user" });
        const record = await generation(a.key, res.headers.get("x-generation-id")!);
        expect(record).toMatchObject({ model: LLAMA, preset_id: created.id, preset: "team", preset_version: 1, inbound_api: api, status: 200 });
      });

  it("fields the request sets win: its parameters, cap, system message and provider fields; the preset fills the rest", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "house", { ...CONFIG, provider: { only: ["cerebras", "groq"], allow_fallbacks: false }, top_p: 0.5 }, SYSTEM);
    const tag = uniqueTag();
    const res = await post("/chat/completions", a.key, {
      model: "@preset/house",
      temperature: 0.9,
      max_completion_tokens: 20,
      provider: { only: ["groq"] },
      messages: [
        { role: "system", content: "Mine." },
        { role: "user", content: `Hi [sim tokens=2 tag=${tag}]` },
      ],
    });
    await answered(res, false);
    const [sent] = await simRequests(tag);
    expect(sent!.carrier).toBe("groq"); // the request's `only`
    expect(sent!.body.temperature).toBe(0.9);
    expect(sent!.body.top_p).toBe(0.5); // not set by the request: the preset's
    expect(sent!.body.max_tokens).toBeUndefined(); // the request set its own cap
    expect(sent!.body.max_completion_tokens).toBe(20);
    expect(sent!.body.messages.map((m: Json) => m.content)).toEqual(["Mine.", expect.stringContaining("Hi")]); // the preset's prompt left out
  });

  it("the request's `models` win over the preset's (a preset naming no model: the request's models serve)", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "chain", { models: [LLAMA] });
    const tag = uniqueTag();
    // The preset names no model: the request's models serve, in its order.
    const res = await post("/chat/completions", a.key, {
      model: "@preset/chain",
      models: [GPT_OSS],
      messages: [{ role: "user", content: `x [sim tokens=1 tag=${tag}]` }],
    });
    expect(((await jsonOf(res, 200)) as Json).model).toBe(GPT_OSS);
  });

  it("@preset/<slug>@<n> pins a version; @preset/<slug> takes the latest, a save applying at once", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "pinned", { model: LLAMA, temperature: 0.1 });
    const before = uniqueTag();
    await answered(
      await post("/chat/completions", a.key, { model: "@preset/pinned", messages: [{ role: "user", content: `x [sim tokens=1 tag=${before}]` }] }),
      false,
    );
    expect((await simRequests(before))[0]!.body.temperature).toBe(0.1); // version 1, now in this isolate's cache
    await jsonOf(await presetsApi(a.mgmt, "PATCH", "/pinned", { config: { model: LLAMA, temperature: 0.2 } }), 200);
    for (const [model, temperature, version] of [
      ["@preset/pinned", 0.2, 2],
      ["@preset/pinned@1", 0.1, 1],
      ["@preset/pinned@2", 0.2, 2],
    ] as const) {
      const tag = uniqueTag();
      const res = await post("/chat/completions", a.key, { model, messages: [{ role: "user", content: `x [sim tokens=1 tag=${tag}]` }] });
      await answered(res, false);
      expect((await simRequests(tag))[0]!.body.temperature).toBe(temperature);
      expect(await generation(a.key, res.headers.get("x-generation-id")!)).toMatchObject({ preset: "pinned", preset_version: version });
    }
  });
});

describe("a token count naming a preset", () => {
  it("/messages/count_tokens counts the preset's model and system prompt, as the completion would send them; an unknown preset is a 404", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "counted", { model: LLAMA }, SYSTEM);
    const messages = [{ role: "user", content: "How many tokens is this?" }];
    const viaPreset = await jsonOf(await post("/messages/count_tokens", a.key, { model: "@preset/counted", messages }), 200);
    const direct = await jsonOf(await post("/messages/count_tokens", a.key, { model: LLAMA, system: SYSTEM, messages }), 200);
    const bare = await jsonOf(await post("/messages/count_tokens", a.key, { model: LLAMA, messages }), 200);
    expect(viaPreset.input_tokens).toBe(direct.input_tokens);
    expect(viaPreset.input_tokens).toBeGreaterThan(bare.input_tokens);
    const unknown = await jsonOf(await post("/messages/count_tokens", a.key, { model: "@preset/ghost", messages }), 404);
    expect(unknown).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });
});

describe("a preset that is not there", () => {
  const cases: [Api, (res: Response) => Promise<string>][] = [
    ["chat", async (res) => ((await jsonOf(res, 404)) as Json).error.message],
    ["responses", async (res) => ((await jsonOf(res, 404)) as Json).error.message],
    [
      "messages",
      async (res) => {
        const body = await jsonOf(res, 404);
        expect(body).toMatchObject({ type: "error", error: { type: "not_found_error" } });
        return body.error.message;
      },
    ],
  ];
  for (const [api, messageOf] of cases)
    it(`${api}: an unknown preset and an unknown version are 404s in the caller's protocol, recorded at cost 0`, async () => {
      const a = await accountWithManagementKey();
      await createPreset(a.mgmt, "real", { model: LLAMA });
      const unknown = await post(REQUESTS[api]("@preset/ghost", "x").path, a.key, REQUESTS[api]("@preset/ghost", "x").body);
      expect(await messageOf(unknown)).toMatch(/Preset `ghost` not found/);
      const noVersion = await post(REQUESTS[api]("@preset/real@3", "x").path, a.key, REQUESTS[api]("@preset/real@3", "x").body);
      expect(await messageOf(noVersion)).toMatch(/Preset `real` has no version 3: its versions are 1 to 1/);
      const record = await generation(a.key, noVersion.headers.get("x-generation-id")!);
      expect(record).toMatchObject({ status: 404, total_cost: 0, preset: null, preset_version: null });
    });

  it("another account's preset is a 404, as an unknown one", async () => {
    const owner = await accountWithManagementKey();
    await createPreset(owner.mgmt, "private", { model: LLAMA });
    const other = await newAccount(5);
    const res = await post("/chat/completions", other.key, { model: "@preset/private", messages: [{ role: "user", content: "x" }] });
    expect(((await jsonOf(res, 404)) as Json).error.message).toMatch(/Preset `private` not found/);
  });

  it("a deleted preset is a 404 at once", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "gone", { model: LLAMA });
    const first = await post("/chat/completions", a.key, { model: "@preset/gone", messages: [{ role: "user", content: "x [sim tokens=1]" }] });
    await answered(first, false);
    await jsonOf(await presetsApi(a.mgmt, "DELETE", "/gone"), 200);
    const res = await post("/chat/completions", a.key, { model: "@preset/gone", messages: [{ role: "user", content: "x" }] });
    expect(res.status).toBe(404);
  });

  it("a malformed preset name is a 400; embeddings refuse presets with a 400", async () => {
    const a = await accountWithManagementKey();
    for (const model of ["@preset/", "@preset/Bad_Slug", "@preset/ok@0", "@preset/ok@x"]) {
      const res = await post("/chat/completions", a.key, { model, messages: [{ role: "user", content: "x" }] });
      expect(((await jsonOf(res, 400)) as Json).error.message).toMatch(/preset/);
    }
    const res = await post("/embeddings", a.key, { model: "@preset/anything", input: "x" });
    expect(((await jsonOf(res, 400)) as Json).error.message).toMatch(/Presets apply to completions \(chat, messages, responses\), not embeddings/);
  });
});
