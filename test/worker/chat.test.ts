import { describe, it, expect } from "vitest";
import { uncachedCost, chat, newAccount, settled, generation, user, admin, get, call, storedRecords } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { nanoToUsd } from "../../src/catalog/money";

const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct"; // three carriers, no reasoning
type Json = Record<string, any>;

describe("POST /chat/completions (non-stream)", () => {
  it("returns the completion with a generation id, the requested model, the carrier and the exact cost", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, ...user("hello [sim tokens=6]") });
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(body.id).toMatch(/^gen-[0-9a-f]+$/);
    expect(res.headers.get("x-generation-id")).toBe(body.id);
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe(LLAMA);
    const cheapest = catalog.endpoints(LLAMA)[0]!;
    expect(body.provider).toBe(cheapest.providerEntry.name);
    expect(body.choices[0].message.role).toBe("assistant");
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage.completion_tokens).toBe(6);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + 6);
    const expected = uncachedCost(body.usage.prompt_tokens, 6, cheapest);
    expect(body.usage.cost).toBe(nanoToUsd(expected));
    const t = await settled(a.accountId);
    expect(Math.round(t.total_usage * 1e9)).toBe(expected);
    expect(Math.round(t.balance * 1e9)).toBe(10e9 - expected);
  });

  it("forwards every other field unchanged with the carrier's model id", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const extra = {
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 50,
      stop: ["\n\n"],
      seed: 7,
      response_format: { type: "json_object" },
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    };
    // `user` and the router's own fields are not forwarded as sent: router-fields.test.ts
    const res = await chat(a.key, { model: LLAMA, ...user(`x [sim tag=${tag}]`), ...extra });
    expect(res.status).toBe(200);
    const [received] = await simRequests(tag);
    expect(received!.body).toEqual({ model: catalog.endpoints(LLAMA)[0]!.upstream_model, ...user(`x [sim tag=${tag}]`), ...extra });
  });

  it("router/auto and an omitted model use gpt-oss-20b; the response echoes what was sent", async () => {
    const a = await newAccount(10);
    const tagAuto = uniqueTag();
    const auto = (await (await chat(a.key, { model: "router/auto", ...user(`[sim tag=${tagAuto}]`) })).json()) as Json;
    expect(auto.model).toBe("router/auto");
    const gptOss = catalog.endpoints("openai/gpt-oss-20b")[0]!;
    expect((await simRequests(tagAuto))[0]!.body.model).toBe(gptOss.upstream_model);
    const omitted = (await (await chat(a.key, user("hi"))).json()) as Json;
    expect(omitted.model).toBe("openai/gpt-oss-20b");
    expect(omitted.provider).toBe(gptOss.providerEntry.name);
  });

  it("reports reasoning tokens of reasoning models in the record", async () => {
    const a = await newAccount(10);
    const body = (await (await chat(a.key, { model: "openai/gpt-oss-20b", ...user("think [sim tokens=8]") })).json()) as Json;
    const g = await generation(a.key, body.id);
    expect(g.native_tokens_reasoning).toBe(2);
    expect(g.tokens_completion).toBe(8);
  });
});

describe("errors of POST /chat/completions", () => {
  const expectError = async (res: Response, status: number, message?: RegExp) => {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe(status);
    expect(typeof body.error.message).toBe("string");
    if (message) expect(body.error.message).toMatch(message);
    return body;
  };

  it("400 for a body that is not JSON, missing or empty messages, an unknown model", async () => {
    const a = await newAccount(1);
    await expectError(await chat(a.key, "{not json"), 400, /not valid JSON/);
    await expectError(await chat(a.key, "[1,2]"), 400, /JSON object/);
    await expectError(await chat(a.key, { model: LLAMA }), 400, /messages/);
    await expectError(await chat(a.key, { model: LLAMA, messages: [] }), 400, /non-empty/);
    await expectError(await chat(a.key, { model: LLAMA, messages: "hi" }), 400, /messages/);
    await expectError(await chat(a.key, { model: LLAMA, messages: [{ content: "no role" }] }), 400, /role/);
    await expectError(await chat(a.key, { model: LLAMA, stream: "yes", ...user("x") }), 400, /stream/);
    await expectError(await chat(a.key, { model: "acme/none", ...user("x") }), 400, /acme\/none is not in the catalog/);
  });

  it("413 names the body limit", async () => {
    const a = await newAccount(1);
    await expectError(await chat(a.key, { model: LLAMA, ...user("x".repeat(4 * 1024 * 1024 + 10)) }), 413, /4194304 bytes/);
  });

  it("401 for a missing, malformed, unknown or disabled key", async () => {
    await expectError(await call("/api/v1/chat/completions", { method: "POST", body: JSON.stringify(user("x")) }), 401, /Missing API key/);
    await expectError(await chat("not-a-key", user("x")), 401, /Invalid API key/);
    await expectError(await chat("sk-sy-v1-" + "a".repeat(64), user("x")), 401, /Invalid API key/);
    const a = await newAccount(1);
    await admin(`/keys/${a.hash}/disable`, {});
    await expectError(await chat(a.key, user("x")), 401, /disabled/);
    await expectError(await get("/key", a.key), 401, /disabled/);
    await admin(`/keys/${a.hash}/enable`, {});
    expect((await chat(a.key, user("x"))).status).toBe(200);
  });

  it("402 for a paid model at zero balance, naming the credits page; a free model still works", async () => {
    const a = await newAccount();
    const body = await expectError(await chat(a.key, { model: LLAMA, ...user("x") }), 402, /https:\/\/switchyard\.test\/settings\/credits/);
    expect(body.error.message).toMatch(/add credits/i);
    const free = await chat(a.key, { model: "openai/gpt-oss-20b:free", ...user("x") });
    expect(free.status).toBe(200);
    expect(((await free.json()) as Json).usage.cost).toBe(0);
  });

  it("402 once the key has reached its credit limit, for paid and free models", async () => {
    const a = await newAccount(10, 1);
    expect((await chat(a.key, { model: LLAMA, ...user("x [sim tokens=20]") })).status).toBe(200);
    await settled(a.accountId);
    await admin(`/keys/${a.hash}/limit`, { limit: 0.000001 }); // lowered below what it spent: reached
    await expectError(await chat(a.key, { model: LLAMA, ...user("x") }), 402, /credit limit/);
    await expectError(await chat(a.key, { model: "openai/gpt-oss-20b:free", ...user("x") }), 402, /credit limit/);
    const key = (await (await get("/key", a.key)).json()) as Json;
    expect(key.data.limit).toBe(0.000001);
    expect(key.data.limit_remaining).toBe(0);
  });

  it("falls back to the next carrier on 429, 5xx and timeouts, and records who served", async () => {
    const a = await newAccount(10);
    const [first, second, third] = catalog.endpoints(LLAMA);
    for (const fault of ["status=429", "status=500", "status=503", "hang", "reset_after=0"]) {
      const res = await chat(a.key, { model: LLAMA, ...user(`x [sim carrier=${first!.provider} ${fault}]`) });
      const body = (await res.json()) as Json;
      expect(res.status, fault).toBe(200);
      expect(body.provider, fault).toBe(second!.providerEntry.name);
      expect((await generation(a.key, body.id)).provider_name).toBe(second!.providerEntry.name);
    }
    const res = await chat(a.key, { model: LLAMA, ...user(`x [sim carrier=${first!.provider} status=502] [sim carrier=${second!.provider} status=500]`) });
    expect(((await res.json()) as Json).provider).toBe(third!.providerEntry.name);
  });

  for (const status of [401, 402, 403, 404]) {
    it(`a carrier's own ${status} (its key, its account, its model) moves on to the next carrier and is recorded`, async () => {
      const a = await newAccount(10);
      const [first, second] = catalog.endpoints(LLAMA);
      const tag = uniqueTag();
      const res = await chat(a.key, { model: LLAMA, ...user(`x [sim carrier=${first!.provider} status=${status}] [sim tag=${tag}]`) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.provider).toBe(second!.providerEntry.name);
      expect((await simRequests(tag)).map((r) => r.carrier)).toEqual([first!.provider, second!.provider]);
      const record = await generation(a.key, body.id);
      expect((record.provider_responses as Json[]).map((x) => [x.provider_name, x.status])).toEqual([
        [first!.providerEntry.name, status],
        [second!.providerEntry.name, 200],
      ]);
    });
  }

  it("a carrier's 400 may be its own: the next carrier is tried and serves", async () => {
    const a = await newAccount(10);
    const [first, second] = catalog.endpoints(LLAMA);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, ...user(`x [sim carrier=${first!.provider} status=400] [sim tag=${tag}]`) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).provider).toBe(second!.providerEntry.name);
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual([first!.provider, second!.provider]);
  });

  for (const status of [400, 413, 422]) {
    it(`every carrier rejecting the request with ${status}: the caller gets ${status} with the carrier's reason, nothing charged`, async () => {
      const a = await newAccount(10);
      const tag = uniqueTag();
      const res = await chat(a.key, { model: LLAMA, ...user(`x [sim status=${status} tag=${tag}]`) });
      const body = await expectError(res, status, new RegExp(`rejected the request: HTTP ${status}: simulated ${status}`));
      expect((await simRequests(tag)).map((r) => r.carrier)).toEqual(catalog.endpoints(LLAMA).map((e) => e.provider));
      expect(body.error.metadata.attempts.map((x: Json) => x.status)).toEqual([status, status, status]);
      expect((await settled(a.accountId)).total_usage).toBe(0);
      const record = await generation(a.key, res.headers.get("x-generation-id")!);
      expect([record.status, record.total_cost]).toEqual([status, 0]);
    });
  }

  it("a rejection outranks carriers that failed: one 400 and two 500s answer 400", async () => {
    const a = await newAccount(10);
    const [first, second, third] = catalog.endpoints(LLAMA);
    const res = await chat(a.key, {
      model: LLAMA,
      ...user(`x [sim carrier=${first!.provider} status=500] [sim carrier=${second!.provider} status=400] [sim carrier=${third!.provider} status=502]`),
    });
    const body = await expectError(res, 400, new RegExp(`Carrier ${second!.providerEntry.name} rejected the request`));
    expect(body.error.metadata.attempts.map((x: Json) => x.status)).toEqual([500, 400, 502]);
    const record = await generation(a.key, res.headers.get("x-generation-id")!);
    expect(record.status).toBe(400);
    expect(record.total_cost).toBe(0);
  });

  for (const [fault, status, pattern] of [
    ["status=503", 503, /No carrier can serve/],
    ["status=429", 429, /rate-limiting/],
    ["status=500", 502, /simulated 500/],
    ["status=401", 502, /simulated 401/],
    ["malformed", 502, /malformed JSON/],
  ] as const) {
    it(`every carrier failing with ${fault} gives ${status}, charges nothing and records the failure`, async () => {
      const a = await newAccount(10);
      const tag = uniqueTag();
      const body = await expectError(await chat(a.key, { model: LLAMA, ...user(`x [sim ${fault} tag=${tag}]`) }), status, pattern);
      expect((await simRequests(tag)).map((r) => r.carrier).sort()).toEqual(
        catalog
          .endpoints(LLAMA)
          .map((e) => e.provider)
          .sort(),
      );
      expect(body.error.metadata.attempts).toHaveLength(3);
      const t = await settled(a.accountId);
      expect(t.total_usage).toBe(0);
      expect(t.balance).toBe(10);
    });
  }
});

describe("generation records", () => {
  it("records app, streamed, latency, tokens, cost and status; visible only to its account", async () => {
    const a = await newAccount(10);
    const b = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, ...user("x [sim tokens=4]") }, { "X-Title": "My App" });
    const body = (await res.json()) as Json;
    const g = await generation(a.key, body.id);
    expect(g).toMatchObject({
      id: body.id,
      model: LLAMA,
      provider_name: body.provider,
      app: "My App",
      streamed: false,
      tokens_prompt: body.usage.prompt_tokens,
      tokens_completion: 4,
      total_cost: body.usage.cost,
      finish_reason: "stop",
      status: 200,
    });
    expect(g.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(g.latency).toBeTypeOf("number");
    expect(g.generation_time as number).toBeGreaterThanOrEqual(g.latency as number);
    expect((await get(`/generation?id=${body.id}`, b.key)).status).toBe(404);
    const referred = (await (await chat(a.key, { model: LLAMA, ...user("x") }, { "HTTP-Referer": "https://example.org/page" })).json()) as Json;
    expect((await generation(a.key, referred.id)).app).toBe("example.org");
  });

  it("failed requests are recorded with cost 0 and their status", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: "acme/none", ...user("x") });
    expect(res.status).toBe(400);
    await settled(a.accountId);
    // The id of a failed request is not returned, so look it up among the account's stored records.
    const rows = (await storedRecords(a.accountId, 1)).map((g) => ({ status: g.status, cost_nano: g.costNano }));
    expect(rows).toEqual([{ status: 400, cost_nano: 0 }]);
  });

  it("GET /generation: 404 without id (the contract lists no 400 here) and for a malformed or unknown id", async () => {
    const a = await newAccount(1);
    expect((await get("/generation", a.key)).status).toBe(404);
    expect((await get("/generation?id=../../etc", a.key)).status).toBe(404);
    expect((await get("/generation?id=gen-doesnotexist", a.key)).status).toBe(404);
    expect((await get("/generation?id=gen-x")).status).toBe(401);
  });
});

describe("GET /key and /credits", () => {
  it("/key returns the contract's shape plus disabled", async () => {
    const a = await newAccount(5);
    const res = await get("/key", a.key);
    const { data } = (await res.json()) as Json;
    expect(data).toMatchObject({
      label: a.label,
      usage: 0,
      limit: null,
      limit_remaining: null,
      is_free_tier: false,
      disabled: false,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
    });
    expect(a.label).toMatch(/^sk-sy-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{3}$/);
    const free = await newAccount();
    expect(((await (await get("/key", free.key)).json()) as Json).data.is_free_tier).toBe(true);
  });

  it("/credits returns the account's totals in USD", async () => {
    const a = await newAccount(2.5);
    await admin(`/accounts/${a.accountId}/credits`, { usd: 1.25 });
    const res = await get("/credits", a.key);
    expect(await res.json()).toEqual({ data: { total_credits: 3.75, total_usage: 0 } });
    expect((await get("/credits")).status).toBe(401);
  });

  it("unknown routes give a JSON 404", async () => {
    const res = await get("/nothing-here");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 404, message: expect.stringMatching(/^No route at GET \/api\/v1\/nothing-here\. The API is at /) } });
  });
});
