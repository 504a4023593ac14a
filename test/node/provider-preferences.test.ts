import { describe, it, expect } from "vitest";
import { Catalog, type PricedEndpoint } from "../../src/catalog/catalog";
import { orderEndpoints, type EndpointHealth, type OrderFacts } from "../../src/routing/order-endpoints";
import { providerPreferences } from "../../src/request/provider-preferences";
import { requestParameters } from "../../src/routing/request-parameters";

// A small catalog: three carriers of one model, cheapest first: cheap (0.1+0.2), mid (0.2+0.3), dear (1+1).
const carrier = (slug: string, name: string, data_policy?: object) => ({
  slug,
  name,
  base_url: `https://${slug}.example/v1`,
  headquarters: null,
  datacenters: [],
  privacy_policy_url: null,
  terms_of_service_url: null,
  status_page_url: null,
  ...(data_policy ? { data_policy } : {}),
});
const endpoint = (provider: string, inp: number, out: number, quantization: string | null, extra: object = {}) => ({
  provider,
  upstream_model: "m",
  input_price_per_1m: inp,
  output_price_per_1m: out,
  context_length: 1000,
  max_completion_tokens: null,
  quantization,
  ...extra,
});
const catalog = Catalog.parse({
  default_model: "a/m",
  providers: [
    carrier("dear", "Dear Co", { retains_prompts: false, trains_on_prompts: false, zdr: true }),
    carrier("mid", "Mid AI", { retains_prompts: true, trains_on_prompts: false }),
    carrier("cheap", "Cheap Inc", { retains_prompts: true, trains_on_prompts: true }),
  ],
  models: [
    {
      id: "a/m",
      canonical_slug: "a/m",
      hugging_face_id: null,
      name: "M",
      description: "",
      created: 1,
      context_length: 1000,
      input_modalities: ["text"],
      output_modalities: ["text"],
      tokenizer: "x",
      instruct_type: null,
      knowledge_cutoff: null,
      supported_parameters: ["temperature", "tools", "tool_choice", "seed"],
      endpoints: [
        endpoint("dear", 1, 1, "fp16"),
        endpoint("mid", 0.2, 0.3, "fp8", { supported_parameters: ["temperature", "seed"] }),
        endpoint("cheap", 0.1, 0.2, null),
      ],
    },
  ],
});
const all = catalog.endpoints("a/m");
const slugs = (r: ReturnType<typeof orderEndpoints>) => ("endpoints" in r ? r.endpoints.map((e) => e.provider) : r.emptiedBy);
const facts: OrderFacts = { parameters: [] };

describe("orderEndpoints", () => {
  const cases: [string, unknown, string[] | string, Partial<OrderFacts>?][] = [
    ["no preferences: cheapest first", undefined, ["cheap", "mid", "dear"]],
    ["null provider", null, ["cheap", "mid", "dear"]],
    ["empty object", {}, ["cheap", "mid", "dear"]],
    ["order puts a dearer carrier first, then the rest", { order: ["dear"] }, ["dear", "cheap", "mid"]],
    ["order by display name, any case", { order: ["MID ai", "dEaR co"] }, ["mid", "dear", "cheap"]],
    ["order by slug, any case", { order: ["DEAR"] }, ["dear", "cheap", "mid"]],
    ["order naming an unknown carrier is skipped", { order: ["nobody", "mid"] }, ["mid", "cheap", "dear"]],
    ["order without fallbacks: only those", { order: ["dear", "mid"], allow_fallbacks: false }, ["dear", "mid"]],
    ["no fallbacks without order: only the first", { allow_fallbacks: false }, ["cheap"]],
    ["order of unknowns without fallbacks empties", { order: ["nobody"], allow_fallbacks: false }, "order"],
    ["allow_fallbacks true is the default", { order: ["dear"], allow_fallbacks: true }, ["dear", "cheap", "mid"]],
    ["only", { only: ["Mid AI", "dear"] }, ["mid", "dear"]],
    ["only nobody", { only: ["nobody"] }, "only"],
    ["ignore", { ignore: ["CHEAP"] }, ["mid", "dear"]],
    ["ignore everyone", { ignore: ["cheap", "mid", "dear"] }, "ignore"],
    ["only and ignore together", { only: ["cheap", "mid"], ignore: ["cheap"] }, ["mid"]],
    ["quantizations", { quantizations: ["fp8", "fp16"] }, ["mid", "dear"]],
    ["quantizations: unknown matches a null quantization", { quantizations: ["unknown"] }, ["cheap"]],
    ["quantizations none served", { quantizations: ["int4"] }, "quantizations"],
    ["data_collection deny keeps neither retaining nor training", { data_collection: "deny" }, ["dear"]],
    ["data_collection allow filters nothing", { data_collection: "allow" }, ["cheap", "mid", "dear"]],
    ["zdr", { zdr: true }, ["dear"]],
    ["zdr false filters nothing", { zdr: false }, ["cheap", "mid", "dear"]],
    ["zdr after ignore of the only zdr carrier", { ignore: ["dear"], zdr: true }, "zdr"],
    ["require_parameters: the carrier lacking tools drops", { require_parameters: true }, ["cheap", "dear"], { parameters: ["tools"] }],
    ["require_parameters with supported parameters keeps all", { require_parameters: true }, ["cheap", "mid", "dear"], { parameters: ["seed"] }],
    ["require_parameters: nobody supports it", { require_parameters: true }, "require_parameters", { parameters: ["logprobs"] }],
    ["parameters ignored without require_parameters", {}, ["cheap", "mid", "dear"], { parameters: ["logprobs"] }],
    ["max_price prompt (USD per 1M, inclusive)", { max_price: { prompt: 0.2 } }, ["cheap", "mid"]],
    ["max_price completion as a string", { max_price: { completion: "0.2" } }, ["cheap"]],
    ["max_price both", { max_price: { prompt: 1, completion: 0.3 } }, ["cheap", "mid"]],
    ["max_price request: per-request price is 0", { max_price: { request: 0 } }, ["cheap", "mid", "dear"]],
    ["max_price below every carrier", { max_price: { prompt: 0.01 } }, "max_price"],
    ["sort price with order: order first, price after", { order: ["dear"], sort: "price" }, ["dear", "cheap", "mid"]],
    ["sort object form", { sort: { by: "price", partition: "none" } }, ["cheap", "mid", "dear"]],
    ["sort throughput without measurements keeps the order", { sort: "throughput" }, ["cheap", "mid", "dear"]],
    ["sort latency without measurements keeps the order", { sort: { by: "latency" } }, ["cheap", "mid", "dear"]],
    ["preferred cutoffs without measurements keep the order", { preferred_min_throughput: 100, preferred_max_latency: { p90: 1 } }, ["cheap", "mid", "dear"]],
    ["combined: data_collection then order without fallbacks", { data_collection: "deny", order: ["cheap", "dear"], allow_fallbacks: false }, ["dear"]],
    ["combined: the first filter that empties is named", { only: ["cheap"], zdr: true, max_price: { prompt: 0 } }, "zdr"],
  ];
  for (const [name, prefs, expected, extra] of cases)
    it(name, () => {
      const parsed = providerPreferences.parse(prefs);
      expect(slugs(orderEndpoints(all, parsed, { ...facts, ...extra }))).toEqual(expected);
    });

  it("names the filter in the message", () => {
    const r = orderEndpoints(all, providerPreferences.parse({ max_price: { prompt: 0.01 } }), facts);
    expect(r).toEqual({ emptiedBy: "max_price", message: expect.stringMatching(/No endpoints found .*provider\.max_price/) });
  });

  it("does not change its input", () => {
    const before = [...all];
    orderEndpoints(all, providerPreferences.parse({ order: ["dear"], sort: "price", ignore: ["mid"] }), facts);
    expect(all).toEqual(before);
  });

  // Once live health exists it is passed in; these pin how it will apply.
  const figures: Record<string, EndpointHealth> = {
    cheap: { throughput: { p50: 20, p90: 10 }, latency: { p50: 2, p90: 5 } },
    mid: { throughput: { p50: 200, p90: 150 }, latency: { p50: 0.3, p90: 0.6 } },
    dear: { throughput: { p50: 90 }, latency: { p50: 0.8 } },
  };
  const health = (e: PricedEndpoint) => figures[e.provider];
  const measured: [string, unknown, string[]][] = [
    ["sort throughput: fastest first", { sort: "throughput" }, ["mid", "dear", "cheap"]],
    ["sort latency: quickest first", { sort: { by: "latency" } }, ["mid", "dear", "cheap"]],
    ["preferred_min_throughput (p50) moves slower ones back, never out", { preferred_min_throughput: 100 }, ["mid", "cheap", "dear"]],
    ["preferred_max_latency per percentile", { preferred_max_latency: { p90: 1 } }, ["mid", "dear", "cheap"]],
    ["a missing figure does not count as a miss", { preferred_min_throughput: { p90: 100 } }, ["mid", "dear", "cheap"]],
    ["order still comes first", { order: ["cheap"], sort: "throughput" }, ["cheap", "mid", "dear"]],
  ];
  for (const [name, prefs, expected] of measured)
    it(`with measurements: ${name}`, () => {
      expect(slugs(orderEndpoints(all, providerPreferences.parse(prefs), { parameters: [], health }))).toEqual(expected);
    });
});

describe("the provider schema", () => {
  const bad: [string, unknown, RegExp][] = [
    ["unknown key", { fallbacks: true }, /fallbacks/],
    ["order not an array", { order: "groq" }, /./],
    ["allow_fallbacks not a boolean", { allow_fallbacks: "no" }, /./],
    ["data_collection outside the enum", { data_collection: "maybe" }, /./],
    ["quantization outside the enum", { quantizations: ["fp12"] }, /./],
    ["sort outside the enum", { sort: "speed" }, /./],
    ["sort object with an unknown key", { sort: { by: "price", extra: 1 } }, /extra/],
    ["max_price with an unknown key", { max_price: { tokens: 1 } }, /tokens/],
    ["max_price not a number", { max_price: { prompt: "cheap" } }, /./],
    ["negative max_price", { max_price: { prompt: -1 } }, /./],
    ["cutoff with an unknown percentile", { preferred_max_latency: { p95: 1 } }, /p95/],
    ["provider not an object", "groq", /./],
  ];
  for (const [name, value, message] of bad)
    it(`refuses ${name}`, () => {
      const r = providerPreferences.safeParse(value);
      expect(r.success).toBe(false);
      expect(JSON.stringify(r.error!.issues)).toMatch(message);
    });

  it("accepts every field of the contract, null for each", () => {
    const fields = [
      "order",
      "only",
      "ignore",
      "allow_fallbacks",
      "require_parameters",
      "data_collection",
      "zdr",
      "enforce_distillable_text",
      "quantizations",
      "sort",
      "max_price",
      "preferred_min_throughput",
      "preferred_max_latency",
    ];
    expect(providerPreferences.safeParse(Object.fromEntries(fields.map((f) => [f, null]))).success).toBe(true);
    expect(providerPreferences.parse({ max_price: { prompt: "1.5", completion: 2 } })).toEqual({ max_price: { prompt: 1.5, completion: 2 } });
  });
});

describe("requestParameters", () => {
  const cases: [Record<string, unknown>, string[]][] = [
    [{ model: "x", messages: [], stream: true, provider: {} }, []],
    [{ temperature: 0.5, seed: null, tools: [] }, ["temperature", "tools"]],
    [{ max_completion_tokens: 5 }, ["max_tokens"]],
    [{ response_format: { type: "json_schema" } }, ["response_format", "structured_outputs"]],
    [{ response_format: { type: "json_object" } }, ["response_format"]],
  ];
  for (const [body, expected] of cases) it(JSON.stringify(body), () => expect(requestParameters(body).sort()).toEqual(expected.sort()));
});
