import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { costNano } from "../../src/catalog/money";
import { presentPricing, cachesImplicitly } from "../../src/api/present-catalog";
import { charge } from "../../src/request/charge";
import { holdNano } from "../../src/request/hold";
import { NO_MEDIA } from "../../src/request/prompt-media";
import { chatRequestSchema } from "../../src/request/chat-request";
import { openAiChat } from "../../src/protocols/outbound/openai-chat";

// Cache and long-context prices, exact in integer nano-USD, from the catalog's published prices.
const catalog = Catalog.parse(catalogJson);
const sonnet = catalog.endpoints("anthropic/claude-sonnet-4.5")[0]!;
const pro = catalog.endpoints("google/gemini-2.5-pro")[0]!;
const gpt5 = catalog.endpoints("openai/gpt-5")[0]!;
const llama = catalog.endpoints("meta-llama/llama-3.1-8b-instruct")[0]!;
const haiku55 = catalog.endpoints("anthropic/claude-haiku-5.5")[0]!;
const opus55 = catalog.endpoints("anthropic/claude-opus-5.5")[0]!;
const sonnet55 = catalog.endpoints("anthropic/claude-sonnet-5.5")[0]!;
const fable52 = catalog.endpoints("anthropic/claude-fable-5.2")[0]!;
const sol = catalog.endpoints("openai/gpt-6.1-sol")[0]!;
const usage = (p: number, c: number, cached = 0, write = 0, write1h = 0) => ({
  promptTokens: p,
  completionTokens: c,
  reasoningTokens: 0,
  cachedTokens: cached,
  cacheWriteTokens: write,
  cacheWrite1hTokens: write1h,
});

describe("cache prices", () => {
  it("Claude Sonnet 4.5: $3 in, $15 out, $0.30 read, $3.75 write, $6 1-hour write per 1M", () => {
    expect([sonnet.inputNano, sonnet.outputNano, sonnet.cacheReadNano, sonnet.cacheWriteNano, sonnet.cacheWrite1hNano]).toEqual([3000, 15000, 300, 3750, 6000]);
  });

  it.each([
    // prompt 3,210 = 10 uncached + 3,000 read + 200 written (50 of them 1-hour); 5 completion
    ["Anthropic read + write + 1h write", sonnet, usage(3210, 5, 3000, 200, 50), 10 * 3000 + 3000 * 300 + 150 * 3750 + 50 * 6000 + 5 * 15000],
    ["OpenAI implicit read", gpt5, usage(2048, 100, 1024), 1024 * 1250 + 1024 * 125 + 100 * 10000],
    ["no cache prices: reads billed as input", llama, usage(100, 10, 60), 100 * llama.inputNano + 10 * llama.outputNano],
    ["reported reads beyond the prompt are clamped to it", sonnet, usage(100, 0, 150, 20), 100 * 300],
    ["Gemini 2.5 Pro at 200,000 prompt tokens: the base prices", pro, usage(200_000, 10, 100_000), 100_000 * 1250 + 100_000 * 125 + 10 * 10000],
    ["Gemini 2.5 Pro above 200,000: every token at the long-context prices", pro, usage(200_001, 10, 100_000), 100_001 * 2500 + 100_000 * 250 + 10 * 15000],
    // Claude Opus 5.5: $4 in, $20 out, $0.20 read, $5 write, $8 1-hour write; Sonnet 5.5: $2, $10, $0.20, $2.50, $4 (one price at any length).
    ["Claude Opus 5.5 read + write + 1h write", opus55, usage(3210, 5, 3000, 200, 50), 10 * 4000 + 3000 * 200 + 150 * 5000 + 50 * 8000 + 5 * 20000],
    ["Claude Sonnet 5.5 read + write + 1h write", sonnet55, usage(3210, 5, 3000, 200, 50), 10 * 2000 + 3000 * 200 + 150 * 2500 + 50 * 4000 + 5 * 10000],
    [
      "Claude Fable 5.2 read + write + 1h write ($8, $40, $0.20, $10, $16)",
      fable52,
      usage(3210, 5, 3000, 200, 50),
      10 * 8000 + 3000 * 200 + 150 * 10000 + 50 * 16000 + 5 * 40000,
    ],
    ["Claude Opus 5.5 at 900,000 prompt tokens: no long-context tier", opus55, usage(900_000, 5), 900_000 * 4000 + 5 * 20000],
    // Claude Haiku 5.5: $0.10 in, $0.50 out, $0.01 read, $0.125 write, $0.20 1-hour write; above 100K prompt tokens 5× each.
    [
      "Claude Haiku 5.5 at 100,000 prompt tokens: the base prices, writes included",
      haiku55,
      usage(100_000, 1000, 50_000, 20_000, 5_000),
      30_000 * 100 + 50_000 * 10 + 15_000 * 125 + 5_000 * 200 + 1000 * 500,
    ],
    [
      "Claude Haiku 5.5 above 100,000: every token at the long-prompt prices, cache writes at theirs",
      haiku55,
      usage(100_001, 1000, 50_000, 20_000, 5_000),
      30_001 * 500 + 50_000 * 50 + 15_000 * 625 + 5_000 * 1000 + 1000 * 2500,
    ],
    // GPT-6.1 Sol: $2 in, $0.10 read, $2.50 write, $10 out; above 272K input $4, $0.20, $5 and $15.
    ["GPT-6.1 Sol at 272,000 prompt tokens: the base prices", sol, usage(272_000, 10, 100_000), 172_000 * 2000 + 100_000 * 100 + 10 * 10000],
    [
      "GPT-6.1 Sol above 272,000: the long-context prices, cache writes at theirs",
      sol,
      usage(272_001, 10, 100_000, 1000),
      171_001 * 4000 + 100_000 * 200 + 1000 * 5000 + 10 * 15000,
    ],
  ])("%s", (_name, endpoint, tokens, want) => {
    expect(costNano(tokens, endpoint)).toBe(want);
  });

  it("the charge names what caching saved (negative when writes cost more); insured answers save nothing", () => {
    expect(charge(usage(3210, 5, 3000, 200, 50), sonnet, "stop", false)).toEqual({
      costNano: 10 * 3000 + 3000 * 300 + 150 * 3750 + 50 * 6000 + 5 * 15000,
      insured: false,
      cacheDiscountNano: 3210 * 3000 - (10 * 3000 + 3000 * 300 + 150 * 3750 + 50 * 6000),
      byokUpstreamNano: null, // served with the platform's key: no BYOK fee
    });
    expect(charge(usage(1000, 5, 0, 1000), sonnet, "stop", false).cacheDiscountNano).toBe(1000 * 3000 - 1000 * 3750);
    expect(charge(usage(1000, 0, 500), sonnet, null, false)).toEqual({ costNano: 0, insured: true, cacheDiscountNano: 0, byokUpstreamNano: null });
  });

  it("the hold prices a prompt token as the dearest write, and at long-context prices once the prompt may pass their threshold", () => {
    const body = chatRequestSchema.parse({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
    expect(holdNano(body, 1000, [sonnet], NO_MEDIA)).toBe(1000 * 6000 + 10 * 15000);
    expect(holdNano(body, 200_000, [pro], NO_MEDIA)).toBe(200_000 * 1250 + 10 * 10000);
    expect(holdNano(body, 200_001, [pro], NO_MEDIA)).toBe(200_001 * 2500 + 10 * 15000);
  });

  it("published as the contract names them, per token; implicit caching where reads are priced and writes are not", () => {
    expect(presentPricing(sonnet)).toEqual({
      prompt: "0.000003",
      completion: "0.000015",
      request: "0",
      image: "0",
      input_cache_read: "0.0000003",
      input_cache_write: "0.00000375",
      input_cache_write_1h: "0.000006",
    });
    expect(presentPricing(gpt5)).toMatchObject({ input_cache_read: "0.000000125" });
    expect(presentPricing(llama)).not.toHaveProperty("input_cache_read");
    expect([cachesImplicitly(sonnet), cachesImplicitly(gpt5), cachesImplicitly(pro), cachesImplicitly(llama)]).toEqual([false, true, true, false]);
    // OpenAI prices its implicit cache's writes (GPT-6.1 Sol): still implicit.
    const sol = catalog.endpoints("openai/gpt-6.1-sol")[0]!;
    expect(presentPricing(sol)).toMatchObject({ input_cache_read: "0.0000001", input_cache_write: "0.0000025" });
    expect(cachesImplicitly(sol)).toBe(true);
  });
});

describe("OpenAI's reasoning-model rules", () => {
  const body = (json: Record<string, unknown>) => chatRequestSchema.parse({ model: "openai/gpt-5", messages: [{ role: "user", content: "x" }], ...json });
  it.each([
    [
      { max_tokens: 50, reasoning: { effort: "high" }, include_reasoning: true },
      { max_completion_tokens: 50, reasoning_effort: "high" },
    ],
    [
      { max_completion_tokens: 20, max_tokens: 50, reasoning: { enabled: false } },
      { max_completion_tokens: 20, reasoning_effort: "minimal" },
    ],
    [{ reasoning_effort: "low" }, { reasoning_effort: "low" }],
    [{ reasoning: { effort: "xhigh" } }, { reasoning_effort: "high" }],
  ])("%j → %j", (fields, want) => {
    const sent = JSON.parse(openAiChat.bodies(body(fields), false, null)(gpt5));
    expect(sent).toEqual({ model: "gpt-5", messages: [{ role: "user", content: "x" }], ...want });
  });

  it("other carriers get the request as sent, from the same prepared bodies", () => {
    const bodies = openAiChat.bodies(body({ max_tokens: 50, reasoning: { effort: "high" } }), false, null);
    expect(JSON.parse(bodies(llama))).toMatchObject({ max_tokens: 50, reasoning: { effort: "high" } });
    expect(JSON.parse(bodies(gpt5))).not.toHaveProperty("max_tokens");
  });
});
