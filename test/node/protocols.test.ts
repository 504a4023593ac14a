import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import { openAiChat as openAiCompatible } from "../../src/protocols/outbound/openai-chat";
import { carrierProtocol } from "../../src/protocols/outbound";
import { carrierHeaders } from "../../src/carriers/carrier-headers";
import { openAiChat } from "../../src/protocols/inbound/openai-chat";
import { CALLER_PROTOCOLS } from "../../src/protocols/inbound";
import { plainUsage } from "../../src/request/usage";
import { accounted } from "./accounted-stream";

// The protocol seams, as tables: a carrier protocol turns the canonical request into its wire request and
// its answer back into the canonical one; a caller protocol reads its request and renders the canonical answer.
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("meta-llama/llama-3.1-8b-instruct")[0]!;
type Json = Record<string, any>;

describe("carrier protocol: OpenAI-compatible", () => {
  const body = chatRequestSchema.parse({
    model: "meta-llama/llama-3.1-8b-instruct",
    models: ["openai/gpt-oss-20b"],
    provider: { sort: "price" },
    session_id: "s",
    user: "ada",
    temperature: 0.2,
    stream_options: { include_usage: false, extra: 1 },
    messages: [{ role: "user", content: "hi" }],
  });

  it.each([
    {
      stream: false,
      userHash: null,
      expect: {
        model: endpoint.upstream_model,
        temperature: 0.2,
        stream_options: { include_usage: false, extra: 1 },
        messages: [{ role: "user", content: "hi" }],
      },
    },
    {
      stream: true,
      userHash: "abc",
      expect: {
        model: endpoint.upstream_model,
        temperature: 0.2,
        user: "abc",
        stream_options: { include_usage: true, extra: 1 },
        messages: [{ role: "user", content: "hi" }],
      },
    },
  ])(
    "the body for stream=$stream: the carrier's model id first, the router's fields out, user hashed, usage asked for on streams",
    ({ stream, userHash, expect: want }) => {
      const text = openAiCompatible.bodies(body, stream, userHash)(endpoint);
      expect(text.startsWith(`{"model":${JSON.stringify(endpoint.upstream_model)},`)).toBe(true);
      expect(JSON.parse(text)).toEqual(want);
    },
  );

  it.each([
    ["https://api.example/v1", "https://api.example/v1/chat/completions"],
    ["https://api.example/v1/", "https://api.example/v1/chat/completions"],
  ])("url(%s)", (base, url) => expect(openAiCompatible.url(base, endpoint, false)).toBe(url));

  it("headers carry the key as a Bearer token", () => {
    expect(carrierHeaders(endpoint, "k1")).toEqual({
      "content-type": "application/json",
      authorization: "Bearer k1",
      accept: "application/json, text/event-stream",
    });
  });

  it.each([
    [{ choices: [] }, true],
    [{ choices: [{ message: { content: "x" } }], usage: { prompt_tokens: 1 } }, true],
    [{ object: "error" }, false],
    [[], false],
    [null, false],
    ["text", false],
  ])("answer(%j) usable: %s", (json, usable) => {
    const read = openAiCompatible.answer(json, body);
    expect("answer" in read).toBe(usable);
    if ("answer" in read) expect(read.answer).toBe(json);
    else expect(read.unusable).toBe("the carrier's answer is not a chat completion");
  });

  it("its streams carry canonical chunks already (no decoder), as text/event-stream", () => {
    expect(openAiCompatible.streamDecoder(body)).toBeNull();
    expect(openAiCompatible.isEventStream("text/event-stream; charset=utf-8")).toBe(true);
    expect(openAiCompatible.isEventStream("application/json")).toBe(false);
  });

  it("is the protocol of every catalog endpoint whose carrier names openai-chat (the default), unless the endpoint names its own", () => {
    for (const m of catalog.models)
      for (const e of catalog.endpoints(m.id))
        if ((e.providerEntry.protocol ?? "openai-chat") === "openai-chat" && e.protocol === undefined) expect(carrierProtocol(e)).toBe(openAiCompatible);
    // A carrier that names no protocol speaks the default one.
    const unnamed = catalog.models.flatMap((m) => catalog.endpoints(m.id)).filter((e) => e.providerEntry.protocol === undefined && e.protocol === undefined);
    expect(unnamed.length).toBeGreaterThan(0);
    for (const e of unnamed) expect(carrierProtocol(e)).toBe(openAiCompatible);
  });
});

describe("caller protocol: OpenAI chat", () => {
  // The usage every answer carries: the counts, their details (no cache here), the cost and its parts, exact from the endpoint's prices.
  const usage = {
    prompt_tokens: 3,
    completion_tokens: 4,
    total_tokens: 7,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
    cost: (3 * endpoint.inputNano + 4 * endpoint.outputNano) / 1e9,
    cost_details: {
      upstream_inference_cost: null,
      upstream_inference_prompt_cost: (3 * endpoint.inputNano) / 1e9,
      upstream_inference_completions_cost: (4 * endpoint.outputNano) / 1e9,
    },
  };
  const facts = (metadata: Json | null = null) => ({
    genId: "gen-1",
    model: "m:floor",
    provider: "Groq",
    created: 1700000000,
    echo: {},
    metadata: () => metadata,
    sealer: null,
  });

  it.each([
    {
      name: "our id, model and carrier; usage with the cost; a null system_fingerprint",
      upstream: {
        id: "up-1",
        object: "chat.completion",
        created: 5,
        model: "up",
        choices: [{ index: 0 }],
        usage: { prompt_tokens: 9, completion_tokens: 9, extra: 1 },
      },
      metadata: null,
      expect: {
        id: "gen-1",
        object: "chat.completion",
        created: 5,
        model: "m:floor",
        provider: "Groq",
        system_fingerprint: null,
        choices: [{ index: 0 }],
        usage: { ...usage, extra: 1 },
      },
    },
    {
      name: "no created from the carrier: ours; its fingerprint kept; metadata when asked",
      upstream: { choices: [], system_fingerprint: "fp" },
      metadata: { requested: "m" },
      expect: {
        id: "gen-1",
        object: "chat.completion",
        created: 1700000000,
        model: "m:floor",
        provider: "Groq",
        system_fingerprint: "fp",
        choices: [],
        usage,
        openrouter_metadata: { requested: "m" },
      },
    },
  ])("answer: $name", ({ upstream, metadata, expect: want }) => {
    const tokens = plainUsage(3, 4, 0);
    const charged = { costNano: 3 * endpoint.inputNano + 4 * endpoint.outputNano, insured: false, cacheDiscountNano: 0 };
    expect(openAiChat.answer(upstream, { tokens, charged, endpoint }, facts(metadata))).toEqual(want);
  });

  it.each([
    [{ status: 402 as const, message: "no", metadata: undefined }, { error: { code: 402, message: "no" } }],
    [{ status: 429 as const, message: "slow", metadata: { window: "minute" } }, { error: { code: 429, message: "slow", metadata: { window: "minute" } } }],
  ])("errorBody(%j)", (err, body) => expect(openAiChat.errorBody(err)).toEqual(body));

  it("a stream ends with the metadata chunk when asked, the error chunk when it failed, then [DONE]", () => {
    const parse = (text: string) =>
      text
        .split("\n\n")
        .filter(Boolean)
        .map((e) => (e === "data: [DONE]" ? e : JSON.parse(e.slice(6))));
    expect(parse(accounted(openAiChat.stream(facts(), endpoint), endpoint).end(null))).toEqual(["data: [DONE]"]);
    const ended = parse(accounted(openAiChat.stream(facts({ requested: "m" }), endpoint), endpoint).end({ status: 502, message: "lost" }));
    const head = { id: "gen-1", object: "chat.completion.chunk", created: 1700000000, model: "m:floor", provider: "Groq" };
    expect(ended).toEqual([
      { ...head, choices: [], openrouter_metadata: { requested: "m" } },
      { ...head, error: { code: 502, message: "lost" }, choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }] },
      "data: [DONE]",
    ]);
  });

  it("reads a request: 413 over 4 MiB, 400 for what is not a chat request, the body and its size otherwise", async () => {
    const req = (text: string) => new Request("https://x.test/api/v1/chat/completions", { method: "POST", body: text });
    const text = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hé" }] });
    expect(await openAiChat.read(req(text), null)).toEqual({ body: JSON.parse(text), bytes: new TextEncoder().encode(text).byteLength, unknown: [] });
    const typo = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }], temprature: 1 });
    expect((await openAiChat.read(req(typo), null)).unknown).toEqual(["temprature"]);
    await expect(openAiChat.read(req('{"model":"m"}'), null)).rejects.toMatchObject({ status: 400 });
    await expect(openAiChat.read(req("x".repeat(4 * 1024 * 1024 + 1)), null)).rejects.toMatchObject({ status: 413 });
  });

  it("is registered", () => expect(CALLER_PROTOCOLS["openai-chat"]).toBe(openAiChat));
});
