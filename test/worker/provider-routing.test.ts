import { describe, it, expect } from "vitest";
import { chat, get, newAccount, settled, generation, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

// The request's `provider` preferences, end to end: which carrier the simulator saw, what was answered and recorded.
const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const endpoints = catalog.endpoints(LLAMA);
const [CHEAPEST, SECOND] = endpoints;
const DEAREST = endpoints.at(-1)!;
type Json = Record<string, any>;

async function served(provider: unknown, extra: string = "") {
  const a = await newAccount(10);
  const tag = uniqueTag();
  const res = await chat(a.key, { model: LLAMA, provider, ...user(`x ${extra} [sim tag=${tag}]`) });
  const body = (await res.json()) as Json;
  return { a, res, body, carriers: (await simRequests(tag)).map((r) => r.carrier) };
}

describe("provider preferences route the request", () => {
  it("order puts a dearer carrier first, by display name in any case", async () => {
    const { res, body, a, carriers } = await served({ order: [DEAREST.providerEntry.name.toUpperCase()] });
    expect(res.status).toBe(200);
    expect(body.provider).toBe(DEAREST.providerEntry.name);
    expect(carriers).toEqual([DEAREST.provider]);
    expect((await generation(a.key, body.id)).provider_name).toBe(DEAREST.providerEntry.name);
  });

  it("order falls back to the rest when the listed carrier fails", async () => {
    const { res, body, carriers } = await served({ order: [DEAREST.provider] }, `[sim carrier=${DEAREST.provider} status=503]`);
    expect(res.status).toBe(200);
    expect(body.provider).toBe(CHEAPEST!.providerEntry.name);
    expect(carriers).toEqual([DEAREST.provider, CHEAPEST!.provider]);
  });

  it("allow_fallbacks: false returns the listed carrier's error instead of falling back", async () => {
    const { res, body, carriers } = await served({ order: [DEAREST.provider], allow_fallbacks: false }, `[sim carrier=${DEAREST.provider} status=503]`);
    expect(res.status).toBe(503);
    expect(body.error.metadata.attempts.map((x: Json) => x.provider)).toEqual([DEAREST.providerEntry.name]);
    expect(carriers).toEqual([DEAREST.provider]);
  });

  it("only and ignore", async () => {
    const only = await served({ only: [SECOND!.provider] });
    expect(only.body.provider).toBe(SECOND!.providerEntry.name);
    const ignore = await served({ ignore: [CHEAPEST!.providerEntry.name] });
    expect(ignore.body.provider).toBe(SECOND!.providerEntry.name);
    expect(ignore.carriers).toEqual([SECOND!.provider]);
  });

  it("data_collection: deny skips carriers that retain or train on prompts", async () => {
    const clean = endpoints.find((e) => e.providerEntry.data_policy?.retains_prompts === false && e.providerEntry.data_policy.trains_on_prompts === false)!;
    expect(clean.provider).not.toBe(CHEAPEST!.provider); // the catalog's cheapest collects: the filter must move the request
    const { body, carriers } = await served({ data_collection: "deny" });
    expect(body.provider).toBe(clean.providerEntry.name);
    expect(carriers).toEqual([clean.provider]);
  });

  it("max_price is a hard filter, even over order", async () => {
    const limit = { prompt: SECOND!.input_price_per_1m, completion: String(SECOND!.output_price_per_1m) };
    expect(DEAREST.input_price_per_1m > limit.prompt || DEAREST.output_price_per_1m > Number(limit.completion)).toBe(true);
    const { body, carriers } = await served({ order: [DEAREST.provider, SECOND!.provider], max_price: limit });
    expect(body.provider).toBe(SECOND!.providerEntry.name);
    expect(carriers).toEqual([SECOND!.provider]);
  });
});

describe("require_parameters, by each endpoint's supported_parameters", () => {
  // The catalog gives one of this model's carriers a narrower list than the model's.
  const narrow = endpoints.find((e) => e.supported_parameters)!;
  const lacking = catalog.model(LLAMA)!.supported_parameters.find((p) => !narrow.supportedParameters.includes(p))!;

  it("/endpoints publishes the endpoint's own list", async () => {
    const body = (await (await get(`/models/${LLAMA}/endpoints`)).json()) as Json;
    const row = body.data.endpoints.find((e: Json) => e.tag === narrow.provider);
    expect(row.supported_parameters).toEqual(narrow.supported_parameters);
    expect(row.supported_parameters).not.toContain(lacking);
  });

  it("skips a listed carrier that does not support a parameter sent", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await chat(a.key, {
      model: LLAMA,
      [lacking]: 0.5,
      provider: { order: [narrow.provider], require_parameters: true },
      ...user(`x [sim tag=${tag}]`),
    });
    expect(res.status).toBe(200);
    const carriers = (await simRequests(tag)).map((r) => r.carrier);
    expect(carriers).toHaveLength(1);
    expect(carriers[0]).not.toBe(narrow.provider);
    // Without require_parameters the listed carrier serves.
    const plain = await served({ order: [narrow.provider] });
    expect(plain.carriers).toEqual([narrow.provider]);
  });
});

describe("preferences that leave no carrier, and invalid preferences", () => {
  it("404 naming the filter; nothing held or charged, no carrier called, recorded at cost 0", async () => {
    const { a, res, body, carriers } = await served({ max_price: { prompt: 0 } });
    expect(res.status).toBe(404);
    expect(body.error).toMatchObject({ code: 404, message: expect.stringMatching(/provider\.max_price/) });
    expect(carriers).toEqual([]);
    const t = await settled(a.accountId);
    expect(t).toMatchObject({ total_credits: 10, total_usage: 0, held: 0 });
    const g = await generation(a.key, res.headers.get("x-generation-id")!);
    expect(g).toMatchObject({ status: 404, total_cost: 0 });
  });

  it("404 for zdr after ignoring every zero-retention carrier", async () => {
    const zdr = endpoints.filter((e) => e.providerEntry.data_policy?.zdr).map((e) => e.provider);
    expect(zdr.length).toBeGreaterThan(0);
    const { res, body, carriers } = await served({ ignore: zdr, zdr: true });
    expect(res.status).toBe(404);
    expect(body.error.message).toMatch(/provider\.zdr/);
    expect(carriers).toEqual([]);
  });

  for (const [name, provider, message] of [
    ["an unknown key", { order: ["groq"], fallback: false }, /fallback/],
    ["a wrong type", { allow_fallbacks: "no" }, /provider\.allow_fallbacks/],
    ["a value outside the enum", { sort: "fastest" }, /provider\.sort/],
  ] as const)
    it(`400 for ${name} in provider, no carrier called`, async () => {
      const { res, body, carriers } = await served(provider);
      expect(res.status).toBe(400);
      expect(body.error.message).toMatch(message);
      expect(carriers).toEqual([]);
    });
});
