import { describe, it, expect, beforeAll, afterAll } from "vitest";
import OpenAI from "openai";
import { startServiceFixture, newAccount, waitForGeneration, type ServiceFixture } from "./service-fixture";

// POST /api/v1/embeddings and GET /api/v1/embeddings/models with the official openai SDK, unchanged, over
// real HTTP against the service started as `npm start` starts it, on each provider's embeddings model.
let f: ServiceFixture;
let key: string;

beforeAll(async () => {
  f = await startServiceFixture("embeddings");
  key = (await newAccount(f, 10)).key;
});

afterAll(async () => {
  await f?.stop();
});

const client = (apiKey = key) => new OpenAI({ apiKey, baseURL: `${f.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe.each([
  ["openai/text-embedding-3-small", 1536, 0.02, "OpenAI"],
  ["google/gemini-embedding-001", 3072, 0.15, "Google AI Studio"],
])("embeddings.create on %s", (model, size, pricePer1m, provider) => {
  it("one vector per input, in order, deterministic, unit length; the SDK's base64 decoded to the same floats", async () => {
    const { data: res, response } = await client()
      .embeddings.create({ model, input: ["the quick brown fox", "jumps over", "the quick brown fox"] })
      .withResponse();
    expect(res.object).toBe("list");
    expect(res.model).toBe(model);
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    for (const d of res.data) {
      expect(d.embedding).toHaveLength(size);
      expect(norm(d.embedding)).toBeCloseTo(1, 3);
    }
    expect(res.data[0]!.embedding).toEqual(res.data[2]!.embedding);
    expect(res.data[0]!.embedding).not.toEqual(res.data[1]!.embedding);
    // The SDK asks for base64 unless told otherwise; asking for floats gives the same numbers (to float32 precision).
    const floats = await client().embeddings.create({ model, input: "the quick brown fox", encoding_format: "float" });
    floats.data[0]!.embedding.forEach((x, i) => expect(res.data[0]!.embedding[i]).toBeCloseTo(x, 5));
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens);
    expect(response.headers.get("x-generation-id")).toMatch(/^gen-/);
  });

  it("dimensions shortens the vector", async () => {
    const res = await client().embeddings.create({ model, input: "short", dimensions: 256, encoding_format: "float" });
    expect(res.data[0]!.embedding).toHaveLength(256);
  });

  it("charged per input token at the model's price and recorded as an embeddings generation", async () => {
    const { data: res, response } = await client().embeddings.create({ model, input: "price me exactly", encoding_format: "float" }).withResponse();
    const id = response.headers.get("x-generation-id")!;
    const record = (await (await waitForGeneration(f, key, id)).json()) as { data: Record<string, unknown> };
    const tokens = res.usage.prompt_tokens;
    expect(record.data).toMatchObject({
      id,
      model,
      provider_name: provider,
      api_type: "embeddings",
      inbound_api: "embeddings",
      tokens_prompt: tokens,
      tokens_completion: 0,
      status: 200,
    });
    // Integer nano-USD: tokens × price per token.
    expect(Math.round((record.data.total_cost as number) * 1e9)).toBe(Math.round(tokens * pricePer1m * 1000));
    expect((res.usage as unknown as { cost: number }).cost).toBe(record.data.total_cost);
  });
});

describe("refusals", () => {
  it.each([
    ["a completion model", { model: "openai/gpt-5-mini", input: "x" }, /not an embeddings model/],
    ["dimensions beyond the schema", { model: "openai/text-embedding-3-small", input: "x", dimensions: 0 }, /dimensions/],
    ["an empty input", { model: "openai/text-embedding-3-small", input: "" }, /input/],
    ["token arrays to a text-only carrier", { model: "google/gemini-embedding-001", input: [[1, 2, 3]] }, /token arrays/],
    ["input_type OpenAI does not take", { model: "openai/text-embedding-3-small", input: "x", input_type: "search_query" }, /input_type/],
  ])("%s → 400", async (_name, body, message) => {
    const err = (await client()
      .embeddings.create(body as never)
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(message);
  });

  it("a completion model is refused an embeddings model on chat", async () => {
    const err = (await client()
      .chat.completions.create({ model: "openai/text-embedding-3-small", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/POST \/api\/v1\/embeddings/);
  });

  it("402 when the account cannot pay", async () => {
    const { key: poor } = await newAccount(f, 0);
    const err = (await client(poor)
      .embeddings.create({ model: "openai/text-embedding-3-small", input: "x" })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(402);
  });

  it("a carrier failure is a 5xx in OpenAI's shape, recorded, nothing charged", async () => {
    const { data, response } = await client()
      .embeddings.create({ model: "openai/text-embedding-3-small", input: "x [sim status=500]" })
      .withResponse()
      .catch((e: InstanceType<typeof OpenAI.APIError>) => ({ data: e, response: null }));
    expect(response).toBeNull();
    expect((data as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(500);
  });
});

describe("GET /api/v1/embeddings/models", () => {
  it("lists the embeddings models only, in the /models shape", async () => {
    const res = (await (await fetch(`${f.url}/api/v1/embeddings/models`)).json()) as {
      data: Array<{ id: string; architecture: { output_modalities: string[] } }>;
    };
    expect(res.data.map((m) => m.id).sort()).toEqual(["google/gemini-embedding-001", "openai/text-embedding-3-small"]);
    for (const m of res.data) expect(m.architecture.output_modalities).toEqual(["embeddings"]);
  });
});
