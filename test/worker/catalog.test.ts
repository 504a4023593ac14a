import { SELF, env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import bundled from "../../catalog.json";
import { catalogSchema, type CatalogFile } from "../../src/catalog/schema";
import { Catalog } from "../../src/catalog/catalog";
import { CATALOG_KV_KEY, forgetCatalogMemo } from "../../src/catalog/load";
import { refreshHealth } from "../../src/health/health-snapshot";
import { forgetHealthMemo } from "../../src/health/health-memo";
import { rollUpAttempts } from "./health-seed";

type Json = Record<string, any>;

const file: CatalogFile = catalogSchema.parse(bundled);
const catalog = new Catalog(file);

async function getJson(path: string): Promise<{ status: number; type: string | null; body: Json }> {
  const res = await SELF.fetch("https://switchyard.test/api/v1" + path);
  return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Json };
}

const MODEL_KEYS = [
  "id",
  "canonical_slug",
  "hugging_face_id",
  "name",
  "created",
  "description",
  "context_length",
  "architecture",
  "pricing",
  "top_provider",
  "per_request_limits",
  "supported_parameters",
  "default_parameters",
  "supported_voices",
  "knowledge_cutoff",
  "expiration_date",
  "links",
];
const ENDPOINT_KEYS = [
  "name",
  "model_id",
  "model_name",
  "context_length",
  "pricing",
  "provider_name",
  "tag",
  "quantization",
  "max_completion_tokens",
  "max_prompt_tokens",
  "supported_parameters",
  "status",
  "uptime_last_30m",
  "uptime_last_5m",
  "uptime_last_1d",
  "supports_implicit_caching",
  "latency_last_30m",
  "throughput_last_30m",
];

/** An independent decimal check: the string is canonical and equals the per-1M price / 1e6. */
function expectPerToken(s: string, perMillion: number) {
  expect(s).toMatch(/^(0|[1-9]\d*)(\.\d*[1-9])?$/);
  expect((s.split(".")[1] ?? "").length).toBeLessThanOrEqual(9);
  expect(Number(s) * 1e6).toBeCloseTo(perMillion, 9);
}

describe("catalog.json", () => {
  it("validates against the schema", () => {
    expect(catalogSchema.safeParse(bundled).success).toBe(true);
  });

  it("is a realistic catalog", () => {
    const authors = new Set(file.models.map((m) => m.id.split("/")[0]));
    expect(file.models.length).toBeGreaterThanOrEqual(14);
    expect(authors.size).toBeGreaterThanOrEqual(6);
    expect(file.providers.length).toBeGreaterThanOrEqual(6);
    expect(file.default_model).toBe("openai/gpt-oss-20b");
    const contexts = file.models.map((m) => m.context_length);
    expect(contexts).toContain(262144);
    expect(contexts).toContain(1048576);
    for (const m of file.models) {
      expect(m.context_length, m.id).toBe(Math.max(...m.endpoints.map((e) => e.context_length)));
      expect(m.description.length, m.id).toBeGreaterThan(0);
    }
    // Every carrier serves something, and several models have 2-3 carriers at different prices.
    const used = new Set(file.models.flatMap((m) => m.endpoints.map((e) => e.provider)));
    expect(used.size).toBe(file.providers.length);
    const multi = file.models.filter((m) => {
      const prices = new Set(m.endpoints.map((e) => `${e.input_price_per_1m}/${e.output_price_per_1m}`));
      return m.endpoints.length >= 2 && m.endpoints.length <= 3 && prices.size >= 2;
    });
    expect(multi.length).toBeGreaterThanOrEqual(5);
  });

  it("has free variants priced 0 and batch variants cheaper than their base", () => {
    const free = file.models.filter((m) => m.id.endsWith(":free"));
    expect(free.map((m) => m.id)).toEqual(expect.arrayContaining(["openai/gpt-oss-20b:free", "meta-llama/llama-3.3-70b-instruct:free"]));
    for (const m of free) for (const e of m.endpoints) expect([e.input_price_per_1m, e.output_price_per_1m], m.id).toEqual([0, 0]);
    const batch = file.models.filter((m) => m.id.endsWith(":batch"));
    expect(batch.length).toBeGreaterThanOrEqual(1);
    for (const m of batch) {
      const base = catalog.endpoints(m.id.replace(/:batch$/, ""))[0]!;
      const cheapest = catalog.endpoints(m.id)[0]!;
      expect(cheapest.inputNano + cheapest.outputNano, m.id).toBeLessThan(base.inputNano + base.outputNano);
    }
  });
});

/** What `GET /models` lists without a filter: the text-output models (embeddings models only with output_modalities). */
const textModels = file.models.filter((m) => m.output_modalities.includes("text"));

describe("GET /models", () => {
  it("lists every model in the contract's shape", async () => {
    const { status, type, body } = await getJson("/models");
    expect(status).toBe(200);
    expect(type).toContain("application/json");
    expect(body.total_count).toBe(textModels.length);
    expect(body.links).toEqual({ next: null });
    expect(body.data.map((m: Json) => m.id)).toEqual(textModels.map((m) => m.id));
    for (const m of body.data as Json[]) {
      for (const k of MODEL_KEYS) expect(m, `${m.id} ${k}`).toHaveProperty(k);
      expect(m.architecture.modality).toMatch(/->text$/);
      expect(m.top_provider.is_moderated).toBe(false);
      expect(m.links.details).toBe(`/api/v1/models/${m.id}/endpoints`);
    }
    const oss = body.data.find((m: Json) => m.id === "openai/gpt-oss-20b");
    expect(oss).toMatchObject({ context_length: 131072, architecture: { modality: "text->text", tokenizer: "GPT" }, knowledge_cutoff: "2024-06-01" });
    expect(body.data.some((m: Json) => m.context_length === 262144)).toBe(true);
    expect(body.data.some((m: Json) => m.context_length === 1048576)).toBe(true);
  });

  it("prices per token exactly, from the endpoint the router tries first", async () => {
    const { body } = await getJson("/models");
    for (const m of body.data as Json[]) {
      const entry = file.models.find((x) => x.id === m.id)!;
      const cheapest = [...entry.endpoints].sort((a, b) => a.input_price_per_1m + a.output_price_per_1m - (b.input_price_per_1m + b.output_price_per_1m))[0]!;
      expectPerToken(m.pricing.prompt, cheapest.input_price_per_1m);
      expectPerToken(m.pricing.completion, cheapest.output_price_per_1m);
      expect(m.pricing).toMatchObject({ request: "0", image: "0" });
      expect(m.top_provider.context_length).toBe(cheapest.context_length);
    }
    for (const m of (body.data as Json[]).filter((x) => x.id.endsWith(":free"))) expect([m.pricing.prompt, m.pricing.completion]).toEqual(["0", "0"]);
  });

  it("pages with offset and limit and filters by supported parameter", async () => {
    const first = await getJson("/models?offset=0&limit=5");
    expect(first.body.data).toHaveLength(5);
    expect(first.body.total_count).toBe(textModels.length);
    expect(first.body.links.next).toBe("/api/v1/models?offset=5&limit=5");
    const rest = await getJson(`/models?offset=5&limit=1000`);
    expect(rest.body.links.next).toBeNull();
    expect([...first.body.data, ...rest.body.data].map((m: Json) => m.id)).toEqual(textModels.map((m) => m.id));

    const tools = await getJson("/models?supported_parameters=tools,reasoning");
    expect(tools.body.data.length).toBeGreaterThan(0);
    for (const m of tools.body.data as Json[]) expect(m.supported_parameters).toEqual(expect.arrayContaining(["tools", "reasoning"]));
    expect(tools.body.total_count).toBe(file.models.filter((m) => ["tools", "reasoning"].every((p) => m.supported_parameters.includes(p))).length);

    const big = await getJson("/models?context=1000000&sort=newest");
    expect(big.body.data.map((m: Json) => m.id)).toEqual(
      file.models
        .filter((m) => m.context_length >= 1000000)
        .sort((a, b) => b.created - a.created)
        .map((m) => m.id),
    );
    expect(big.body.data.length).toBeGreaterThan(1);

    const bad = await getJson("/models?limit=0");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(400);
  });
});

describe("GET /models/count", () => {
  it.each([
    { query: "", count: textModels.length },
    { query: "?output_modalities=embeddings", count: file.models.filter((m) => m.output_modalities.includes("embeddings")).length },
    { query: "?output_modalities=all", count: file.models.length },
    { query: "?output_modalities=text,embeddings", count: file.models.length },
    {
      query: "?supported_parameters=tools,reasoning",
      count: file.models.filter((m) => ["tools", "reasoning"].every((p) => m.supported_parameters.includes(p))).length,
    },
    {
      query: "?model_authors=anthropic&context=1000000",
      count: file.models.filter((m) => m.id.startsWith("anthropic/") && m.context_length >= 1000000).length,
    },
    { query: "?q=llama", count: textModels.filter((m) => m.id.includes("llama")).length },
  ])("$query: {data: {count}}, what GET /models lists with the same filters", async ({ query, count }) => {
    const { status, body } = await getJson(`/models/count${query}`);
    expect(status).toBe(200);
    expect(body).toEqual({ data: { count } });
    expect(count).toBeGreaterThan(0);
    expect(count).toBe((await getJson(`/models${query}`)).body.total_count);
  });

  it("a bad filter is a 400 naming it", async () => {
    const { status, body } = await getJson("/models/count?context=0");
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, message: expect.stringMatching(/^Invalid query parameter context: /) });
  });
});

describe("GET /models/:author/:slug/endpoints", () => {
  it("lists a model's carriers in the order the router tries them", async () => {
    const { status, body } = await getJson("/models/openai/gpt-oss-20b/endpoints");
    expect(status).toBe(200);
    const entry = catalog.model("openai/gpt-oss-20b")!;
    expect(body.data).toMatchObject({ id: entry.id, name: entry.name, created: entry.created, description: entry.description });
    expect(body.data.architecture).toMatchObject({ modality: "text->text", input_modalities: ["text"], output_modalities: ["text"] });
    const endpoints = body.data.endpoints as Json[];
    expect(endpoints.length).toBeGreaterThanOrEqual(2);
    expect(endpoints.map((e) => e.provider_name)).toEqual(catalog.endpoints(entry.id).map((e) => e.providerEntry.name));
    const sums = endpoints.map((e) => Number(e.pricing.prompt) + Number(e.pricing.completion));
    expect(sums).toEqual([...sums].sort((a, b) => a - b));
    expect(new Set(sums).size).toBeGreaterThanOrEqual(2);
    for (const e of endpoints) {
      for (const k of ENDPOINT_KEYS) expect(e, `${e.provider_name} ${k}`).toHaveProperty(k);
      expect(e.model_id).toBe(entry.canonical_slug);
      expect(e.supports_implicit_caching).toBe(false);
    }
    const groq = endpoints.find((e) => e.tag === "groq")!;
    expect(groq).toMatchObject({ provider_name: "Groq", context_length: 131072, quantization: "mxfp4", status: 0 });
    expect(groq.pricing).toMatchObject({ prompt: "0.000000075", completion: "0.0000003" });
  });

  it("serves variants named in the slug", async () => {
    for (const path of ["/models/openai/gpt-oss-20b:free/endpoints", "/models/openai/gpt-oss-20b%3Afree/endpoints"]) {
      const { status, body } = await getJson(path);
      expect(status, path).toBe(200);
      expect(body.data.id).toBe("openai/gpt-oss-20b:free");
      for (const e of body.data.endpoints as Json[]) expect([e.pricing.prompt, e.pricing.completion]).toEqual(["0", "0"]);
    }
    const batch = await getJson("/models/meta-llama/llama-3.3-70b-instruct:batch/endpoints");
    expect(batch.status).toBe(200);
    expect(batch.body.data.endpoints.length).toBeGreaterThanOrEqual(1);
  });

  it("answers 404 JSON for unknown models and path tricks, never 500", async () => {
    const paths = [
      "/models/openai/no-such-model/endpoints",
      "/models/nobody/gpt-oss-20b/endpoints",
      "/models/openai/gpt-oss-20b:nitro/endpoints",
      "/models/OpenAI/GPT-OSS-20B/endpoints",
      "/models/openai%2Fgpt-oss-20b/endpoints",
      "/models/openai/gpt-oss-20b%2F..%2F..%2Fproviders/endpoints",
      "/models/openai/..%2Fgpt-oss-20b/endpoints",
      "/models/openai/%2e%2e/endpoints",
      "/models/openai/.hidden/endpoints",
      "/models/openai/gpt-oss-20b%00/endpoints",
      "/models/openai/%E0%A4%A/endpoints",
      "/models/openai/%ZZ/endpoints",
      `/models/openai/${"a".repeat(5000)}/endpoints`,
      `/models/${"b".repeat(300)}/gpt-oss-20b/endpoints`,
      "/models/openai/gpt-oss-20b/endpoints/extra",
      "/models/openai//endpoints",
    ];
    for (const path of paths) {
      const { status, type, body } = await getJson(path);
      expect(status, path).toBe(404);
      expect(type, path).toContain("application/json");
      expect(body, path).toEqual({ error: { code: 404, message: expect.any(String) } });
    }
  });
});

describe("GET /providers", () => {
  it("lists every provider in the contract's shape", async () => {
    const { status, body } = await getJson("/providers");
    expect(status).toBe(200);
    expect(body.data.map((p: Json) => p.slug)).toEqual(file.providers.map((p) => p.slug));
    expect(body.data.length).toBeGreaterThanOrEqual(6);
    for (const p of body.data as Json[]) {
      expect(Object.keys(p).sort()).toEqual([
        "data_policy",
        "datacenters",
        "headquarters",
        "name",
        "privacy_policy_url",
        "slug",
        "status_page_url",
        "terms_of_service_url",
      ]);
      // What provider.data_collection and provider.zdr route by.
      expect(p.data_policy).toEqual({ retains_prompts: expect.any(Boolean), trains_on_prompts: expect.any(Boolean), zdr: expect.any(Boolean) });
      expect(p.headquarters).toMatch(/^[A-Z]{2}$/);
      expect(p.datacenters.length).toBeGreaterThan(0);
      for (const dc of p.datacenters) expect(dc).toMatch(/^[A-Z]{2}$/);
      expect(p.privacy_policy_url).toMatch(/^https:\/\//);
      expect(p).not.toHaveProperty("base_url"); // where we send traffic is not part of the public shape
    }
  });
});

describe("catalog source", () => {
  afterEach(async () => {
    await env.CATALOG.delete(CATALOG_KV_KEY);
    forgetCatalogMemo();
  });

  /** A request with an empty KV seeds it in waitUntil; wait for that so it cannot land on top of ours. */
  async function settleSeed() {
    await getJson("/providers");
    for (let i = 0; i < 100 && (await env.CATALOG.get(CATALOG_KV_KEY)) === null; i++) await new Promise((r) => setTimeout(r, 10));
  }

  it("serves a valid catalog stored in KV instead of the bundled one", async () => {
    await settleSeed();
    const [first, second] = file.models;
    const override: CatalogFile = { ...file, models: [{ ...first!, name: "KV: overridden" }, second!] };
    await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(override));
    forgetCatalogMemo();
    const { body } = await getJson("/models");
    expect(body.data.map((m: Json) => m.name)).toEqual(["KV: overridden", second!.name]);
    const gone = file.models[5]!.id;
    expect((await getJson(`/models/${gone}/endpoints`)).status).toBe(404);
  });

  it("falls back to the bundled catalog when the KV value is invalid", async () => {
    await settleSeed();
    for (const raw of ["{not json", JSON.stringify({ ...file, default_model: "nobody/nothing" })]) {
      await env.CATALOG.put(CATALOG_KV_KEY, raw);
      forgetCatalogMemo();
      const { status, body } = await getJson("/models");
      expect(status).toBe(200);
      expect(body.total_count).toBe(textModels.length);
    }
  });
});

describe("uptime", () => {
  const MODEL = "z-ai/glm-4.5";
  let n = 0;
  /** One carrier attempt of a flushed record. */
  function row(model: string, provider: string, status: number, agoMs: number) {
    return { id: `gen-uptime-${Date.now()}-${n++}`, model, provider, status, at: Date.now() - agoMs };
  }

  async function insertRows(rows: ReturnType<typeof row>[]) {
    await rollUpAttempts(rows.map((r) => ({ ...r, latencyMs: 100 })));
  }

  /** What the Cron Trigger does once a minute, then a fresh read of its snapshot. */
  async function refreshed() {
    await refreshHealth(env);
    forgetHealthMemo();
  }

  it("is null without traffic", async () => {
    await refreshed();
    const { body } = await getJson("/models/mistralai/mistral-nemo/endpoints");
    for (const e of body.data.endpoints as Json[]) {
      expect(e).toMatchObject({ uptime_last_5m: null, uptime_last_30m: null, uptime_last_1d: null });
    }
  });

  it("is the real share of non-5xx attempts per carrier, rate limits left out", async () => {
    const MIN = 60_000;
    await insertRows([
      row(MODEL, "novita", 200, 1 * MIN),
      row(MODEL, "novita", 200, 2 * MIN),
      row(MODEL, "novita", 400, 3 * MIN), // the caller's fault: the carrier was up
      row(MODEL, "novita", 502, 4 * MIN),
      row(MODEL, "novita", 429, 1 * MIN), // rate limited: neither up nor down
      row(MODEL, "novita", 500, 120 * MIN), // only inside the 1-day window
      row(MODEL, "deepinfra", 200, 10 * MIN), // outside the 5-minute window
      row("qwen/qwen3-32b", "novita", 500, 1 * MIN), // another model
      row(MODEL, "deepinfra", 500, 2 * 24 * 60 * MIN), // older than a day
    ]);

    await refreshed();
    const { body } = await getJson(`/models/${MODEL}/endpoints`);
    const by = Object.fromEntries((body.data.endpoints as Json[]).map((e) => [e.provider_name, e]));
    expect(by.Novita).toMatchObject({ uptime_last_5m: 75, uptime_last_30m: 75, uptime_last_1d: 60 });
    expect(by.DeepInfra).toMatchObject({ uptime_last_5m: null, uptime_last_30m: 100, uptime_last_1d: 100 });
  });
});
