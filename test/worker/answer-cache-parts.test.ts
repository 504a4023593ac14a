import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { cacheAsk } from "../../src/answer-cache/opt-in";
import { cacheKey, canonicalJson } from "../../src/answer-cache/cache-key";
import { notCacheable, retentionRefused } from "../../src/answer-cache/not-cacheable";
import { beyondBounds, readEntry, writeEntry } from "../../src/answer-cache/cache-store";
import { zeroedEvents, type CacheEntry } from "../../src/answer-cache/cache-entry";
import { storable } from "../../src/serve/answer-cache-stage";
import { failedOutcome, type Outcome } from "../../src/request/outcome";
import type { ChatRequest } from "../../src/request/chat-request";

// The answer cache's parts (docs/caching.md), each on its own: the ask, the key, what is never cached,
// what is stored, the entry's expiry and the account's bounds.
const LIMITS = { defaultTtlS: 300, maxTtlS: 86_400 };
const headers = (h: Record<string, string>) => new Headers(h);

describe("the ask (X-OpenRouter-Cache, X-OpenRouter-Cache-TTL)", () => {
  it("opts in with true (the default TTL, or the header's), out with false or nothing; a key's TTL applies without the header", () => {
    expect(cacheAsk(headers({}), LIMITS)).toBeNull();
    expect(cacheAsk(headers({ "x-openrouter-cache": "true" }), LIMITS)).toEqual({ ttlS: 300 });
    expect(cacheAsk(headers({ "x-openrouter-cache": "TRUE", "x-openrouter-cache-ttl": "5" }), LIMITS)).toEqual({ ttlS: 5 });
    expect(cacheAsk(headers({ "x-openrouter-cache": "false" }), LIMITS, 600)).toBeNull(); // the request's false wins over the key
    expect(cacheAsk(headers({}), LIMITS, 600)).toEqual({ ttlS: 600 });
    expect(cacheAsk(headers({}), { defaultTtlS: 300, maxTtlS: 100 }, 600)).toEqual({ ttlS: 100 });
  });

  it("refuses anything else with a 400 naming the header", () => {
    const refused: Array<Record<string, string>> = [
      { "x-openrouter-cache": "1" },
      { "x-openrouter-cache": "true", "x-openrouter-cache-ttl": "-3" },
      { "x-openrouter-cache": "true", "x-openrouter-cache-ttl": "9e9" },
    ];
    for (const h of refused) expect(() => cacheAsk(headers(h), LIMITS)).toThrow(/X-OpenRouter-Cache/);
  });
});

describe("the key", () => {
  const base = { accountId: "acct-a", kind: "chat" as const, stream: false, models: ["m/one"] };
  const body = { model: "alias", messages: [{ role: "user", content: "hi" }], temperature: 0, tools: [{ type: "function", function: { name: "f" } }] };

  it("is the same for the same request whatever its keys' order or the model's alias, and differs in account, stream, models and any parameter", async () => {
    const k = await cacheKey({ ...base, body });
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(await cacheKey({ ...base, body: { temperature: 0, tools: body.tools, messages: body.messages, model: "other-alias" } })).toBe(k);
    expect(await cacheKey({ ...base, accountId: "acct-b", body })).not.toBe(k);
    expect(await cacheKey({ ...base, stream: true, body })).not.toBe(k);
    expect(await cacheKey({ ...base, models: ["m/two"], body })).not.toBe(k);
    expect(await cacheKey({ ...base, kind: "embeddings", body })).not.toBe(k);
    for (const change of [{ temperature: 0.1 }, { seed: 1 }, { max_tokens: 9 }, { stop: ["x"] }, { tool_choice: "none" }, { provider: { only: ["groq"] } }])
      expect(await cacheKey({ ...base, body: { ...body, ...change } })).not.toBe(k);
  });

  it("serializes objects with sorted keys and arrays in order", () => {
    expect(canonicalJson({ b: 1, a: [2, { d: null, c: "x" }], u: undefined })).toBe('{"a":[2,{"c":"x","d":null}],"b":1}');
  });
});

describe("never cached", () => {
  const chat = (extra: Record<string, unknown>, content: unknown = "hi") => ({ messages: [{ role: "user", content }], ...extra }) as ChatRequest;
  it("names why: several samples, the carrier storing, a web search, media by URL; inline media and one sample are cached", () => {
    expect(notCacheable(chat({}))).toBeNull();
    expect(notCacheable(chat({ n: 1 }))).toBeNull();
    expect(notCacheable(chat({ n: 3 }))).toMatch(/^n>1/);
    expect(notCacheable(chat({ store: true }))).toMatch(/^store/);
    expect(notCacheable(chat({ web_search_options: {} }))).toMatch(/^web_search_options/);
    expect(notCacheable(chat({}, [{ type: "image_url", image_url: { url: "https://x.test/a.png" } }]))).toMatch(/^media by URL/);
    expect(notCacheable(chat({}, [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }]))).toBeNull();
  });

  it("a key whose guardrail enforces zero data retention on a model the request may be served by keeps nothing", () => {
    const none = { zdrAnthropic: false, zdrOpenai: false, zdrGoogle: false, zdrXai: false, zdrOther: false };
    expect(retentionRefused([none], ["openai/gpt-oss-20b"])).toBeNull();
    expect(retentionRefused([none, { ...none, zdrOpenai: true }], ["meta-llama/x", "openai/gpt-oss-20b"])).toMatch(
      /^zero data retention: .* openai\/gpt-oss-20b/,
    );
    expect(retentionRefused([{ ...none, zdrOpenai: true }], ["meta-llama/x"])).toBeNull();
    expect(retentionRefused([{ ...none, zdrOther: true }], ["meta-llama/x"])).toMatch(/meta-llama\/x/);
  });

  it("stores only whole answers: a 200 that finished, not insured, cut, cancelled, in error, or capped by the router", () => {
    const ok: Outcome = { ...failedOutcome(200, ""), errorMessage: null, finishReason: "stop", usageSource: "carrier" };
    expect(storable(ok, null)).toBe(true);
    expect(storable({ ...ok, finishReason: "length" }, null)).toBe(true); // the caller's own cap: a whole answer to what it asked
    expect(storable(ok, 100)).toBe(false); // the router lowered the cap: not the answer the request asks for
    expect(storable({ ...ok, finishReason: null }, null)).toBe(false);
    expect(storable({ ...ok, finishReason: "error" }, null)).toBe(false);
    expect(storable({ ...ok, insured: true }, null)).toBe(false);
    expect(storable({ ...ok, cancelled: true }, null)).toBe(false);
    expect(storable({ ...ok, status: 502 }, null)).toBe(false);
    expect(storable({ ...ok, errorMessage: "Carrier x failed mid-stream" }, null)).toBe(false);
  });
});

describe("entries", () => {
  const entry = (createdAt: number, ttlS: number): CacheEntry => ({
    v: 1,
    sourceId: "gen-1",
    model: "m",
    modelId: "m",
    provider: "p",
    finishReason: "stop",
    upstreamId: null,
    createdAt,
    expiresAt: createdAt + ttlS * 1000,
    answer: { choices: [{ index: 0, message: { role: "assistant", content: "x".repeat(2000) }, finish_reason: "stop" }] },
  });
  const storage = { kv: env.CATALOG, d1: env.DB };
  const account = () => `acct-${crypto.randomUUID()}`;
  const bounds = { maxBytes: 1 << 30, maxEntries: 100 };

  it("is served until its TTL passes, to its account only", async () => {
    const a = account();
    await writeEntry(storage, a, "k1", entry(1_000, 5), bounds);
    expect((await readEntry(storage, a, "k1", 5_999))?.sourceId).toBe("gen-1");
    expect(await readEntry(storage, a, "k1", 6_000)).toBeNull();
    expect(await readEntry(storage, account(), "k1", 1_001)).toBeNull();
  });

  it("an account's oldest entries are evicted past its entry count or its bytes, from KV and the index", async () => {
    const a = account();
    for (let i = 0; i < 4; i++) await writeEntry(storage, a, `k${i}`, entry(10_000 + i, 60), { ...bounds, maxEntries: 3 });
    expect(await readEntry(storage, a, "k0", 10_010)).toBeNull();
    for (const k of ["k1", "k2", "k3"]) expect(await readEntry(storage, a, k, 10_010)).not.toBeNull();
    const rows = await env.DB.prepare("SELECT key, bytes FROM answer_cache_entries WHERE account_id = ? ORDER BY created_at")
      .bind(a)
      .all<{ key: string; bytes: number }>();
    expect(rows.results.map((r) => r.key)).toEqual(["k1", "k2", "k3"]);
    const size = rows.results[0]!.bytes;
    await writeEntry(storage, a, "k4", entry(10_004, 60), { maxEntries: 100, maxBytes: size * 2 + 16 });
    expect(await readEntry(storage, a, "k2", 10_010)).toBeNull();
    expect(await readEntry(storage, a, "k3", 10_010)).not.toBeNull();
    expect(await readEntry(storage, a, "k4", 10_010)).not.toBeNull();
  });

  it("bounds count from the newest", () => {
    const rows = [
      { key: "new", bytes: 5 },
      { key: "mid", bytes: 5 },
      { key: "old", bytes: 5 },
    ];
    expect(beyondBounds(rows, { maxBytes: 10, maxEntries: 5 })).toEqual(["old"]);
    expect(beyondBounds(rows, { maxBytes: 100, maxEntries: 1 })).toEqual(["mid", "old"]);
  });

  it("a stored stream reports zero usage: its usage chunk zeroed, or one added when the carrier sent none", () => {
    const chunk = (extra: object) => JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "m", choices: [], ...extra });
    const withUsage = zeroedEvents([
      chunk({ choices: [{ index: 0, delta: { content: "a" } }] }),
      chunk({ usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
    ]);
    expect(JSON.parse(withUsage[1]!).usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    const without = zeroedEvents([chunk({ choices: [{ index: 0, delta: { content: "a" }, finish_reason: "stop" }] })]);
    expect(without).toHaveLength(2);
    expect(JSON.parse(without[1]!)).toMatchObject({ id: "c", choices: [], usage: { prompt_tokens: 0, completion_tokens: 0 } });
  });
});
