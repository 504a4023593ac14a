import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { OpenRouter } from "@openrouter/sdk";
import type { ChatResult, ChatStreamChunk } from "@openrouter/sdk/models";
import type { SendChatCompletionRequestRequest } from "@openrouter/sdk/models/operations";
import { ForbiddenResponseError, NotFoundResponseError, PaymentRequiredResponseError, UnauthorizedResponseError } from "@openrouter/sdk/models/errors";
import catalogJson from "../../catalog.json";
import { newAccount, newManagementKey, startServiceFixture, waitForGeneration, type ServiceFixture } from "./service-fixture.ts";

// The official OpenRouter TypeScript SDK, unchanged, as a client of the service started as `npm start`
// starts it. The SDK parses every answer with its own zod schemas (generated from the same contract),
// so a field out of shape throws; the tests also check the values.
let f: ServiceFixture;
let account: Awaited<ReturnType<typeof newAccount>>;
let sdk: OpenRouter;
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const GPT_OSS = "openai/gpt-oss-20b"; // reasoning
/** Cost of each completion this account made, by generation id. */
const spent = new Map<string, number>();

beforeAll(async () => {
  f = await startServiceFixture("sdk");
  account = await newAccount(f, 10);
  sdk = client(account.key);
});
afterAll(async () => {
  await f?.stop();
});

const client = (apiKey: string) => new OpenRouter({ apiKey, serverURL: `${f.url}/api/v1`, retryConfig: { strategy: "none" }, timeoutMs: 20_000 });

type ChatRequest = SendChatCompletionRequestRequest["chatRequest"];
async function send(request: ChatRequest): Promise<ChatResult> {
  const result = await sdk.chat.send({ chatRequest: { ...request, stream: false } });
  if (result instanceof ReadableStream) throw new Error("expected a JSON completion, got a stream");
  return result;
}
async function stream(request: ChatRequest): Promise<ChatStreamChunk[]> {
  const result = await sdk.chat.send({ chatRequest: { ...request, stream: true } });
  if (!(result instanceof ReadableStream)) throw new Error("expected a stream");
  const chunks: ChatStreamChunk[] = [];
  for await (const chunk of result) chunks.push(chunk);
  return chunks;
}
const words = (text: string) => text.trim().split(/\s+/);

/** The generation through the SDK, once the service has it (bounded polling first). */
async function generation(id: string) {
  await waitForGeneration(f, account.key, id);
  return (await sdk.generations.getGeneration({ id })).data;
}

describe("chat.send", () => {
  it.each([
    [LLAMA, false],
    [GPT_OSS, true],
  ] as const)("non-stream %s: content, usage with cost, and the generation under the same id", async (model, reasoning) => {
    const completion = await send({ model, messages: [{ role: "user", content: "Say hi [sim tokens=6]" }] });
    expect(completion.id).toMatch(/^gen-/);
    expect(completion).toMatchObject({ model, object: "chat.completion", systemFingerprint: null });
    expect(words(completion.choices[0]!.message.content as string)).toHaveLength(6 - (reasoning ? 2 : 0));
    expect(completion.choices[0]!.finishReason).toBe("stop");
    const usage = completion.usage!;
    expect(usage.completionTokens).toBe(6);
    expect(usage.totalTokens).toBe(usage.promptTokens + 6);
    expect(usage.cost).toBeGreaterThan(0);
    spent.set(completion.id, usage.cost!);

    const g = await generation(completion.id);
    expect(g).toMatchObject({
      id: completion.id,
      model,
      streamed: false,
      tokensCompletion: 6,
      totalCost: usage.cost,
      dataRegion: "global",
      finishReason: "stop",
    });
    expect(g.providerName).toEqual(expect.any(String));
    expect(g.nativeTokensReasoning).toBe(reasoning ? 2 : 0);
  });

  it("stream: one id in every chunk, the content, usage with cost last, and the generation under that id", async () => {
    const chunks = await stream({ model: LLAMA, messages: [{ role: "user", content: "Stream please [sim tokens=7]" }] });
    const id = chunks[0]!.id;
    expect(id).toMatch(/^gen-/);
    expect(chunks.every((c) => c.id === id && c.model === LLAMA)).toBe(true);
    expect(words(chunks.map((c) => c.choices[0]?.delta.content ?? "").join(""))).toHaveLength(7);
    expect(chunks.some((c) => c.choices[0]?.finishReason === "stop")).toBe(true);
    const usage = chunks.at(-1)!.usage!;
    expect(usage.completionTokens).toBe(7);
    expect(usage.cost).toBeGreaterThan(0);
    spent.set(id, usage.cost!);

    const g = await generation(id);
    expect(g).toMatchObject({ id, model: LLAMA, streamed: true, tokensCompletion: 7, totalCost: usage.cost, finishReason: "stop" });
  });

  it("errors arrive as the SDK's typed errors: 401, 402", async () => {
    const unknownKey = client("sk-sy-v1-" + "0".repeat(64));
    const denied = await unknownKey.chat.send({ chatRequest: { model: LLAMA, messages: [{ role: "user", content: "x" }] } }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(UnauthorizedResponseError);
    expect((denied as UnauthorizedResponseError).error).toEqual({ code: 401, message: "Invalid API key." });

    const broke = await newAccount(f);
    const refused = await client(broke.key)
      .chat.send({ chatRequest: { model: LLAMA, messages: [{ role: "user", content: "x" }] } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PaymentRequiredResponseError);
    expect((refused as PaymentRequiredResponseError).statusCode).toBe(402);
    expect((refused as PaymentRequiredResponseError).error.message).toMatch(/settings\/credits/);
  });
});

describe("account", () => {
  // After the completions above: what they cost is what the account and key have used.
  const totalSpent = () => [...spent.values()].reduce((a, b) => a + b, 0);

  it("credits.getCredits: $10 granted, usage = the completions' costs", async () => {
    expect(spent.size).toBe(3);
    const deadline = Date.now() + 15_000;
    let credits = (await sdk.credits.getCredits()).data;
    // Bounded polling: a settle reaches the account's totals shortly after the answer.
    while (Math.abs(credits.totalUsage - totalSpent()) > 1e-9 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      credits = (await sdk.credits.getCredits()).data;
    }
    expect(credits.totalCredits).toBe(10);
    expect(credits.totalUsage).toBeCloseTo(totalSpent(), 9);
  });

  it("apiKeys.getCurrentKeyMetadata: label, usage, no limit, the deprecated rate_limit", async () => {
    const key = (await sdk.apiKeys.getCurrentKeyMetadata()).data;
    expect(key).toMatchObject({ label: account.label, limit: null, limitRemaining: null, isFreeTier: false, isManagementKey: false });
    expect(key.usage).toBeCloseTo(totalSpent(), 9);
    expect(key.rateLimit).toEqual({ requests: -1, interval: "10s", note: expect.any(String) });
  });

  it("a key with a limit: limit and what remains of it", async () => {
    const limited = await newAccount(f, 1, 2.5);
    const key = (await client(limited.key).apiKeys.getCurrentKeyMetadata()).data;
    expect(key).toMatchObject({ limit: 2.5, limitRemaining: 2.5, usage: 0 });
  });

  it("generations.getGeneration of an unknown id: NotFoundResponseError", async () => {
    const err = await sdk.generations.getGeneration({ id: "gen-doesnotexist0" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundResponseError);
    expect((err as NotFoundResponseError).statusCode).toBe(404);
  });
});

describe("apiKeys: the key management operations, with a management key", () => {
  let manager: OpenRouter;
  beforeAll(async () => {
    manager = client((await newManagementKey(f, account.id)).key);
  });

  it("create (shown once) → the new key runs completions charged to the account → get, update, list, delete", async () => {
    const expiresAt = new Date("2099-12-31T23:59:59Z");
    const created = await manager.apiKeys.create({
      requestBody: { name: "team app", limit: 1.5, limitReset: "monthly", includeByokInLimit: false, expiresAt },
    });
    expect(created.key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    expect(created.data).toMatchObject({ name: "team app", limit: 1.5, limitRemaining: 1.5, limitReset: "monthly", disabled: false, usage: 0 });
    const hash = created.data.hash;

    // The new key spends on the management key's account, within its own budget.
    const before = (await sdk.credits.getCredits()).data.totalUsage;
    const result = await client(created.key).chat.send({
      chatRequest: { model: LLAMA, stream: false, messages: [{ role: "user", content: "hi [sim tokens=4]" }] },
    });
    if (result instanceof ReadableStream) throw new Error("expected a JSON completion");
    const cost = result.usage!.cost!;
    expect(cost).toBeGreaterThan(0);
    await waitForGeneration(f, account.key, result.id); // recorded on the account that owns the management key
    spent.set(result.id, cost);
    // Read right after the record is found: the settle may still wait in the isolate's batch, and counts already.
    expect((await sdk.credits.getCredits()).data.totalUsage).toBeCloseTo(before + cost, 9);
    expect((await client(created.key).apiKeys.getCurrentKeyMetadata()).data.usage).toBeCloseTo(cost, 9);
    const got = (await manager.apiKeys.get({ hash })).data;
    expect(got).toMatchObject({ hash, usage: cost, usageMonthly: cost });
    expect(got.limitRemaining).toBeCloseTo(1.5 - cost, 9);

    const updated = (await manager.apiKeys.update({ hash, requestBody: { name: "renamed", disabled: true, limit: null, limitReset: null } })).data;
    expect(updated).toMatchObject({ hash, name: "renamed", disabled: true, limit: null, limitRemaining: null, limitReset: null });
    expect(updated.updatedAt).not.toBeNull();
    const refused = await client(created.key)
      .apiKeys.getCurrentKeyMetadata()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UnauthorizedResponseError); // disabled

    const hashes = async (includeDisabled: boolean) => (await manager.apiKeys.list({ includeDisabled })).data.map((k) => k.hash);
    expect(await hashes(false)).not.toContain(hash);
    expect(await hashes(true)).toContain(hash);
    expect(await hashes(true)).toContain(account.hash); // the account's other keys too

    expect(await manager.apiKeys.delete({ hash })).toEqual({ deleted: true });
    expect(await manager.apiKeys.get({ hash }).catch((e: unknown) => e)).toBeInstanceOf(NotFoundResponseError);
  });

  it("roles both ways: an API key gets ForbiddenResponseError on create; a management key says what it is and runs no completions", async () => {
    const err = await sdk.apiKeys.create({ requestBody: { name: "nope" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenResponseError);
    expect((err as ForbiddenResponseError).statusCode).toBe(403);
    expect((await manager.apiKeys.getCurrentKeyMetadata()).data).toMatchObject({ isManagementKey: true, limit: null });
    const chat = await manager.chat
      .send({ chatRequest: { model: LLAMA, stream: false, messages: [{ role: "user", content: "hi" }] } })
      .catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(ForbiddenResponseError);
    expect((chat as ForbiddenResponseError).message).toMatch(/management key/);
  });
});

describe("catalog", () => {
  it("models.list: every completion model of catalog.json", async () => {
    const page = await sdk.models.list();
    expect(page.result.data.map((m) => m.id)).toEqual(catalogJson.models.filter((m) => m.output_modalities.includes("text")).map((m) => m.id));
  });

  it.each([
    { outputModalities: undefined, want: catalogJson.models.filter((m) => m.output_modalities.includes("text")).length },
    { outputModalities: "embeddings", want: catalogJson.models.filter((m) => m.output_modalities.includes("embeddings")).length },
    { outputModalities: "all", want: catalogJson.models.length },
  ])("models.count($outputModalities): what models.list lists with the same filter", async ({ outputModalities, want }) => {
    const { data } = await sdk.models.count(outputModalities === undefined ? undefined : { outputModalities });
    expect(data.count).toBe(want);
    expect(data.count).toBeGreaterThan(0);
  });

  it("endpoints.list: the carriers of a model with per-token prices", async () => {
    const model = catalogJson.models.find((m) => m.id === LLAMA)!;
    const { data } = await sdk.endpoints.list({ author: "meta-llama", slug: "llama-3.1-8b-instruct" });
    expect(data.id).toBe(LLAMA);
    expect(data.endpoints.map((e) => e.tag).sort()).toEqual(model.endpoints.map((e) => e.provider).sort());
    for (const e of data.endpoints) {
      const authored = model.endpoints.find((a) => a.provider === e.tag)!;
      // catalog.json prices are USD per 1M tokens; the contract's are per token, as decimal strings.
      expect(Number(e.pricing.prompt)).toBeCloseTo(authored.input_price_per_1m / 1e6, 15);
      expect(Number(e.pricing.completion)).toBeCloseTo(authored.output_price_per_1m / 1e6, 15);
      expect(e.contextLength).toBe(authored.context_length);
    }
  });

  it("providers.list: every carrier", async () => {
    const { data } = await sdk.providers.list();
    expect(data.map((p) => p.slug)).toEqual(catalogJson.providers.map((p) => p.slug));
  });
});
