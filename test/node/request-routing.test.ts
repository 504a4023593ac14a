import { describe, it, expect } from "vitest";
import { Catalog, type PricedEndpoint } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import {
  capTooHighMessage,
  contextTooLongMessage,
  fitRequest,
  requestNeed,
  unproducibleMessage,
  unsupportedPartsMessage,
  type Need,
} from "../../src/routing/request-fit";
import { completionCapField } from "../../src/request/billed-fields";
import { balanceByPrice } from "../../src/routing/price-balance";
import { balancing, routingRandom } from "../../src/routing/routing-random";
import { planRoute, type RoutePolicy } from "../../src/routing/route-plan";
import { candidateModels } from "../../src/routing/candidate-models";
import { healthThresholds } from "../../src/routing/health-order";
import { settings } from "../../src/settings";

// Routing that knows the request (pure): context fit, tool/format support, price-weighted balancing.
const carrier = (slug: string) => ({
  slug,
  name: slug.toUpperCase(),
  base_url: `https://${slug}.example/v1`,
  headquarters: null,
  datacenters: [],
  privacy_policy_url: null,
  terms_of_service_url: null,
  status_page_url: null,
});
const endpoint = (provider: string, price: number, context_length: number, supported_parameters?: string[]) => ({
  max_completion_tokens: null as number | null,
  provider,
  upstream_model: "m",
  input_price_per_1m: price,
  output_price_per_1m: price,
  context_length,
  quantization: null,
  ...(supported_parameters ? { supported_parameters } : {}),
});
const model = (id: string, endpoints: ReturnType<typeof endpoint>[]) => ({
  id,
  canonical_slug: id,
  hugging_face_id: null,
  name: id,
  description: "",
  created: 1,
  context_length: 4000,
  input_modalities: ["text"],
  output_modalities: ["text"],
  tokenizer: "x",
  instruct_type: null,
  knowledge_cutoff: null,
  supported_parameters: ["temperature", "tools", "tool_choice", "response_format"],
  endpoints,
});
const catalog = Catalog.parse({
  default_model: "a/m",
  providers: ["p1", "p2", "p3", "p4", "free1", "free2"].map(carrier),
  models: [
    // Prices 1, 2, 4 (USD per 1M in and out): inverse-square weights 16 : 4 : 1.
    model("a/m", [endpoint("p1", 1, 1000), endpoint("p2", 2, 4000, ["temperature", "response_format"]), endpoint("p3", 4, 2000)]),
    model("b/big", [endpoint("p4", 3, 100_000)]),
    model("c/free", [endpoint("free1", 0, 1000), endpoint("free2", 0, 1000), endpoint("p1", 1, 1000)]),
    // Maximum outputs 1000 and 3000, and one bounded by its context only (8000).
    model("d/capped", [
      { ...endpoint("p1", 1, 8000), max_completion_tokens: 1000 },
      { ...endpoint("p2", 2, 8000), max_completion_tokens: 3000 },
      endpoint("p3", 4, 8000),
    ]),
    { ...model("e/pictures", [endpoint("p1", 1, 8000)]), output_modalities: ["image", "text"] },
  ],
});
const names = (list: PricedEndpoint[]) => list.map((e) => e.provider);
const noParts = { image: 0, file: 0, audio: 0, video: 0 };
const need = (promptTokens: number, completionTokens = 0, features: string[] = [], parts = noParts, outputs: string[] = []): Need => ({
  parts,
  promptTokens,
  completionTokens,
  features,
  outputs,
});
const allowances = { image: 1600, file: 1600, audio: 1600, video: 1600 };

describe("fitRequest: context", () => {
  it.each([
    { name: "prompt + cap within every context", n: need(500, 400), out: ["p1", "p2", "p3"] },
    { name: "exactly the smallest context fits", n: need(600, 400), out: ["p1", "p2", "p3"] },
    { name: "one token more drops it", n: need(601, 400), out: ["p2", "p3"] },
    { name: "only the largest context", n: need(3000, 1000), out: ["p2"] },
  ])("$name", ({ n, out }) => {
    const fit = fitRequest(catalog.endpoints("a/m"), n);
    expect("endpoints" in fit && names(fit.endpoints)).toEqual(out);
  });

  it("none fits: tooLong names the largest context and the need", () => {
    expect(fitRequest(catalog.endpoints("a/m"), need(3000, 1001))).toEqual({ tooLong: { modelId: "a/m", contextLength: 4000, need: need(3000, 1001) } });
  });

  it("the 400 message names the sizes of every model tried", () => {
    const message = contextTooLongMessage([
      { modelId: "a/m", contextLength: 4000, need: need(3000, 1001) },
      { modelId: "b/big", contextLength: 100_000, need: need(3000, 1001) },
    ]);
    expect(message).toBe(
      "The request needs about 4001 tokens (3000 prompt, estimated + 1001 completion (max_tokens)), more than the largest context of a/m (4000 tokens), b/big (100000 tokens). Shorten the messages or lower max_tokens.",
    );
  });
});

describe("fitRequest: tools and formats", () => {
  it.each([
    { name: "tools skip an endpoint without them", features: ["tools"], out: ["p1", "p3"] },
    { name: "tool_choice the same", features: ["tools", "tool_choice"], out: ["p1", "p3"] },
    { name: "response_format is supported by all", features: ["response_format"], out: ["p1", "p2", "p3"] },
    { name: "nothing asked: all", features: [], out: ["p1", "p2", "p3"] },
  ])("$name", ({ features, out }) => {
    const fit = fitRequest(catalog.endpoints("a/m"), need(10, 0, features));
    expect("endpoints" in fit && names(fit.endpoints)).toEqual(out);
  });

  it("when no endpoint supports a feature, all that fit stay (soft)", () => {
    const fit = fitRequest(catalog.endpoints("a/m"), need(10, 0, ["web_search_options"]));
    expect("endpoints" in fit && names(fit.endpoints)).toEqual(["p1", "p2", "p3"]);
  });

  it("requestNeed reads the completion cap and the features from the body", () => {
    const body = chatRequestSchema.parse({
      messages: [{ role: "user", content: "x".repeat(400) }],
      max_completion_tokens: 50,
      max_tokens: 70,
      tools: [],
      response_format: { type: "json_object" },
    });
    const n = requestNeed(body, allowances);
    expect(n.completionTokens).toBe(70); // the larger of the two caps: a carrier may read either
    expect(n.features).toEqual(["tools", "response_format"]);
    expect(n.promptTokens).toBeGreaterThanOrEqual(100); // 400 bytes ÷ 4, plus the message overhead
  });
});

describe("fitRequest: media parts and the model's input modalities", () => {
  it.each([
    { name: "an image part to a text-only model", parts: { ...noParts, image: 1 }, modality: "image" },
    { name: "audio", parts: { ...noParts, audio: 2 }, modality: "audio" },
    { name: "a file", parts: { ...noParts, file: 1 }, modality: "file" },
    { name: "a video", parts: { ...noParts, video: 1 }, modality: "video" },
  ])("$name: the model does not fit", ({ parts, modality }) => {
    expect(fitRequest(catalog.endpoints("a/m"), need(10, 0, [], parts))).toEqual({
      unsupported: { modelId: "a/m", modality, count: parts[modality as keyof typeof parts], modalities: ["text"] },
    });
  });

  it("requestNeed counts each part type by its modality", () => {
    const body = chatRequestSchema.parse({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "x" },
            { type: "image_url", image_url: { url: "u" } },
            { type: "input_audio", input_audio: { data: "AA", format: "wav" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "file", file: { file_data: "u" } },
            { type: "video_url", video_url: { url: "u" } },
            { type: "input_video", video_url: { url: "u" } },
            { type: "input_image" },
          ],
        },
      ],
    });
    expect(requestNeed(body, allowances).parts).toEqual({ image: 2, file: 1, audio: 1, video: 2 });
  });

  it("the 400 message names the parts, the model and its modalities", () => {
    expect(unsupportedPartsMessage([{ modelId: "a/m", modality: "audio", count: 2, modalities: ["text"] }])).toBe(
      "The request carries 2 audio parts (input_audio), but a/m (input modalities: text) does not take audio input. Send it to a model whose input_modalities include audio (GET /api/v1/models), or remove those parts.",
    );
  });
});

describe("fitRequest: the completion cap against each endpoint's maximum output", () => {
  it.each([
    { name: "no cap: every endpoint", cap: 0, out: ["p1", "p2", "p3"], capped: [] },
    { name: "exactly the smallest maximum", cap: 1000, out: ["p1", "p2", "p3"], capped: [] },
    { name: "one more leaves it out, named", cap: 1001, out: ["p2", "p3"], capped: [{ provider: "p1", maxOutput: 1000 }] },
    {
      name: "an endpoint without max_completion_tokens returns up to its context",
      cap: 3001,
      out: ["p3"],
      capped: [
        { provider: "p1", maxOutput: 1000 },
        { provider: "p2", maxOutput: 3000 },
      ],
    },
  ])("$name", ({ cap, out, capped }) => {
    const fit = fitRequest(catalog.endpoints("d/capped"), need(10, cap));
    if (!("endpoints" in fit)) throw new Error(JSON.stringify(fit));
    expect(names(fit.endpoints)).toEqual(out);
    expect(fit.capped.map((c) => ({ provider: c.endpoint.provider, maxOutput: c.maxOutput }))).toEqual(capped);
  });

  it("above every endpoint's maximum: capTooHigh with the largest (checked before the context)", () => {
    expect(fitRequest(catalog.endpoints("d/capped"), need(10, 8001))).toEqual({ capTooHigh: { modelId: "d/capped", cap: 8001, maxOutput: 8000 } });
    expect(fitRequest(catalog.endpoints("a/m"), need(10, 4001))).toEqual({ capTooHigh: { modelId: "a/m", cap: 4001, maxOutput: 4000 } });
  });

  it.each([
    { field: "max_tokens", message: "max_tokens: 200000 is more than any endpoint of d/capped (at most 8000) returns. Set max_tokens to at most 8000." },
    {
      field: "max_output_tokens",
      message: "max_output_tokens: 200000 is more than any endpoint of d/capped (at most 8000) returns. Set max_output_tokens to at most 8000.",
    },
  ])("the 400 message names the caller's field ($field) and the maximum", ({ field, message }) => {
    expect(capTooHighMessage([{ modelId: "d/capped", cap: 200000, maxOutput: 8000 }], field)).toBe(message);
  });

  it("with fallback models, the maximum named is the largest of them", () => {
    expect(
      capTooHighMessage(
        [
          { modelId: "d/capped", cap: 200000, maxOutput: 8000 },
          { modelId: "b/big", cap: 200000, maxOutput: 100000 },
        ],
        "max_completion_tokens",
      ),
    ).toBe(
      "max_completion_tokens: 200000 is more than any endpoint of d/capped (at most 8000), b/big (at most 100000) returns. Set max_completion_tokens to at most 100000.",
    );
  });

  it("the context message names the caller's field too", () => {
    expect(contextTooLongMessage([{ modelId: "a/m", contextLength: 4000, need: need(3500, 1000) }], "max_output_tokens")).toBe(
      "The request needs about 4500 tokens (3500 prompt, estimated + 1000 completion (max_output_tokens)), more than the largest context of a/m (4000 tokens). Shorten the messages or lower max_output_tokens.",
    );
  });

  it.each([
    { body: { max_tokens: 10 }, field: "max_tokens" },
    { body: { max_completion_tokens: 10 }, field: "max_completion_tokens" },
    { body: { max_tokens: 10, max_completion_tokens: 20 }, field: "max_completion_tokens" },
    { body: { max_tokens: 30, max_completion_tokens: 20 }, field: "max_tokens" },
    { body: { max_tokens: 20, max_completion_tokens: 20 }, field: "max_completion_tokens" },
    { body: {}, field: "max_tokens" },
  ])("completionCapField($body) is $field: the field that sets the cap, as sent", ({ body, field }) => {
    expect(completionCapField(chatRequestSchema.parse({ messages: [{ role: "user", content: "x" }], ...body }))).toBe(field);
  });
});

describe("fitRequest: output modalities", () => {
  it.each([
    { name: "text from a text model", model: "a/m", outputs: ["text"], fits: true },
    { name: "nothing asked", model: "a/m", outputs: [], fits: true },
    { name: "image and text from a model with both", model: "e/pictures", outputs: ["image", "text"], fits: true },
    { name: "image from a text model", model: "a/m", outputs: ["image", "text"], missing: ["image"] },
    { name: "image and audio from a text model", model: "a/m", outputs: ["image", "audio"], missing: ["image", "audio"] },
    { name: "audio from an image model", model: "e/pictures", outputs: ["audio"], missing: ["audio"] },
  ])("$name", ({ model: id, outputs, fits, missing }) => {
    const fit = fitRequest(catalog.endpoints(id), need(10, 0, [], noParts, outputs));
    if (fits) expect("endpoints" in fit).toBe(true);
    else expect(fit).toEqual({ unproducible: { modelId: id, missing, modalities: catalog.model(id)!.output_modalities } });
  });

  it("the 400 message names the modalities and the model's own", () => {
    expect(unproducibleMessage([{ modelId: "a/m", missing: ["image"], modalities: ["text"] }])).toBe(
      "modalities: image is not an output modality of a/m (output modalities: text). Ask for its output modalities only, or send the request to a model whose output_modalities include image (GET /api/v1/models?output_modalities=image).",
    );
  });

  it("requestNeed reads modalities from the body", () => {
    const body = chatRequestSchema.parse({ messages: [{ role: "user", content: "x" }], modalities: ["image", "text"] });
    expect(requestNeed(body, allowances).outputs).toEqual(["image", "text"]);
  });
});

describe("balanceByPrice", () => {
  it("draws the first endpoint in proportion to the inverse square of its price (seeded, 10,000 draws)", () => {
    const random = routingRandom(settings({ ROUTING_SEED: "12345" }));
    const firsts: Record<string, number> = {};
    const N = 10_000;
    for (let i = 0; i < N; i++) {
      const first = balanceByPrice(catalog.endpoints("a/m"), random)[0]!.provider;
      firsts[first] = (firsts[first] ?? 0) + 1;
    }
    const weights = { p1: 16, p2: 4, p3: 1 };
    for (const [p, w] of Object.entries(weights)) {
      const share = w / 21;
      const sd = Math.sqrt(N * share * (1 - share));
      expect(Math.abs((firsts[p] ?? 0) - N * share)).toBeLessThan(4 * sd);
    }
  });

  it("keeps every endpoint exactly once", () => {
    const random = routingRandom(settings({ ROUTING_SEED: "7" }));
    for (let i = 0; i < 100; i++) expect(names(balanceByPrice(catalog.endpoints("a/m"), random)).sort()).toEqual(["p1", "p2", "p3"]);
  });

  it("free endpoints lead, in random order among themselves", () => {
    const random = routingRandom(settings({ ROUTING_SEED: "99" }));
    const leads = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const order = names(balanceByPrice(catalog.endpoints("c/free"), random));
      expect(order[2]).toBe("p1");
      leads.add(order[0]!);
    }
    expect(leads).toEqual(new Set(["free1", "free2"]));
  });

  it.each([
    { r: 0, first: "p1" },
    { r: 15.99 / 21, first: "p1" },
    { r: 16.01 / 21, first: "p2" },
    { r: 20.01 / 21, first: "p3" },
  ])("a draw of $r puts $first first", ({ r, first }) => {
    expect(balanceByPrice(catalog.endpoints("a/m"), () => r)[0]!.provider).toBe(first);
  });
});

describe("routingRandom and balancing", () => {
  it("a seed gives the same sequence to every request; values in [0, 1)", () => {
    const a = routingRandom(settings({ ROUTING_SEED: "42" }));
    const b = routingRandom(settings({ ROUTING_SEED: "42" }));
    const seqA = Array.from({ length: 50 }, a);
    expect(Array.from({ length: 50 }, b)).toEqual(seqA);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(seqA).size).toBe(50);
    expect(routingRandom(settings({}))).toBe(Math.random);
  });

  it("a session seeds the draw: the same account and session always draw alike, other sessions differ", () => {
    const first = (accountId: string, id: string) => balanceByPrice(catalog.endpoints("a/m"), routingRandom(settings({}), { accountId, id }))[0]!.provider;
    expect(Array.from({ length: 20 }, () => first("acct_1", "conv-7"))).toEqual(Array(20).fill(first("acct_1", "conv-7")));
    const sessions = Array.from({ length: 40 }, (_, i) => first("acct_1", `conv-${i}`));
    expect(new Set(sessions).size).toBeGreaterThan(1);
    // ROUTING_SEED wins over the session.
    expect(routingRandom(settings({ ROUTING_SEED: "5" }), { accountId: "acct_1", id: "conv-7" })()).toBe(routingRandom(settings({ ROUTING_SEED: "5" }))());
  });

  it.each([
    { v: undefined, on: true },
    { v: "price", on: true },
    { v: "off", on: false },
  ])("ROUTING_BALANCE=$v → balancing $on", ({ v, on }) => expect(balancing(settings({ ROUTING_BALANCE: v }))).toBe(on));
});

describe("planRoute", () => {
  const lookup = { has: (id: string) => catalog.model(id) !== undefined, resolve: (id: string | undefined) => catalog.resolve(id)?.id };
  const plan = (body: object, random: (() => number) | null = () => 0.99) => {
    const parsed = chatRequestSchema.parse({ messages: [{ role: "user", content: "hi" }], ...body });
    const chosen = candidateModels(parsed.model, parsed.models, lookup, "router/auto");
    if ("unknown" in chosen) throw new Error(chosen.unknown);
    const policy: RoutePolicy = { thresholds: healthThresholds(settings({})), random };
    return planRoute(
      chosen.candidates,
      (id) => catalog.endpoints(id),
      { provider: parsed.provider, need: (pt) => requestNeed(parsed, pt) },
      { parameters: [] },
      policy,
    );
  };

  it.each([
    { name: "balanced without order or sort (a constant high draw takes the last of each remaining list)", body: { model: "a/m" }, out: ["p3", "p2", "p1"] },
    { name: "no random source: cheapest first", body: { model: "a/m" }, random: null, out: ["p1", "p2", "p3"] },
    { name: "provider.order turns balancing off", body: { model: "a/m", provider: { order: ["p2"] } }, out: ["p2", "p1", "p3"] },
    { name: "provider.sort turns balancing off", body: { model: "a/m", provider: { sort: "price" } }, out: ["p1", "p2", "p3"] },
    { name: "a :floor shortcut turns balancing off", body: { model: "a/m:floor" }, out: ["p1", "p2", "p3"] },
    { name: "a completion cap drops the small contexts", body: { model: "a/m", max_tokens: 1500, provider: { sort: "price" } }, out: ["p2", "p3"] },
    { name: "a model without room is skipped for the next", body: { model: "a/m", models: ["b/big"], max_tokens: 5000 }, out: ["p4"] },
  ])("$name", ({ body, random, out }) => {
    expect(names(plan(body, random === undefined ? () => 0.99 : random).endpoints)).toEqual(out);
  });

  it("the same model under two sorts: each endpoint once, for the first candidate that lists it", () => {
    const p = plan({ model: "a/m:floor", models: ["a/m", "b/big"] });
    expect(names(p.endpoints)).toEqual(["p1", "p2", "p3", "p4"]);
    expect(p.endpoints.map((e) => p.candidateOf.get(e)!.answerAs)).toEqual(["a/m:floor", "a/m:floor", "a/m:floor", "b/big"]);
  });

  it("no model has room: every candidate is in tooLong, nothing to try", () => {
    const p = plan({ model: "a/m", models: ["b/big"], max_tokens: 3000, messages: [{ role: "user", content: "x".repeat(400_000) }] });
    expect(p.endpoints).toEqual([]);
    expect(p.tooLong.map((t) => [t.modelId, t.contextLength])).toEqual([
      ["a/m", 4000],
      ["b/big", 100_000],
    ]);
    expect(p.emptied).toEqual([]);
  });

  it("a cap above every endpoint's maximum output: every candidate is in capTooHigh, nothing to try", () => {
    const p = plan({ model: "a/m", models: ["b/big"], max_tokens: 200_000 });
    expect(p.endpoints).toEqual([]);
    expect(p.capTooHigh).toEqual([
      { modelId: "a/m", cap: 200_000, maxOutput: 4000 },
      { modelId: "b/big", cap: 200_000, maxOutput: 100_000 },
    ]);
    expect(p.tooLong).toEqual([]);
  });

  it("endpoints below the cap are left out and listed as capped; a model that cannot produce the modalities is skipped", () => {
    const p = plan({ model: "a/m", models: ["d/capped", "e/pictures"], max_tokens: 1500, provider: { sort: "price" } });
    // a/m: p1 returns at most its context (1000); d/capped: p1 at most its max_completion_tokens (1000).
    expect(p.endpoints.map((e) => `${e.modelId}@${e.provider}`)).toEqual(["a/m@p2", "a/m@p3", "d/capped@p2", "d/capped@p3", "e/pictures@p1"]);
    expect(p.capped.map((c) => `${c.endpoint.modelId}@${c.endpoint.provider}`)).toEqual(["a/m@p1", "d/capped@p1"]);
    const images = plan({ model: "a/m", models: ["e/pictures"], modalities: ["image", "text"] });
    expect(names(images.endpoints)).toEqual(["p1"]);
    expect(images.unproducible.map((u) => u.modelId)).toEqual(["a/m"]);
  });
});
