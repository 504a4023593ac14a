import { describe, it, expect } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import { admin, call, newAccount, ORIGIN } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { estimatePromptTokens } from "../../src/request/token-estimate";
import { parseChatRequest } from "../../src/request/chat-request";
import { chatFromMessages } from "../../src/protocols/inbound/anthropic-messages/request";
import { loadCatalog } from "../../src/catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../../src/protocols/outbound";
import { MAX_MODEL_REQUEST_BYTES } from "../../src/request/json-body";

// POST /api/v1/messages/count_tokens: for keys that may spend, rate-limited per key, bounded like the model
// APIs, exact for an Anthropic model (the carrier's own free count), our estimate otherwise.

const CLAUDE = "anthropic/claude-haiku-4.5";
const headers = (key: string) => ({ "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" });

function countTokens(key: string, body: unknown): Promise<Response> {
  return call("/api/v1/messages/count_tokens", { method: "POST", headers: headers(key), body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** The same through the app with extra Worker vars (a small limit, a carrier without its key). */
async function countTokensWithVars(vars: Record<string, string>, key: string, body: unknown): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(ORIGIN + "/api/v1/messages/count_tokens", { method: "POST", headers: headers(key), body: JSON.stringify(body) }),
    { ...env, ...vars },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

/** Our estimate of a count request's prompt: what the answer is when no carrier counts. */
async function estimateOf(body: Record<string, unknown>): Promise<number> {
  const catalog = await loadCatalog(env, CARRIER_PROTOCOL_NAMES);
  const model = catalog.resolve(body.model as string)!;
  return estimatePromptTokens(parseChatRequest(chatFromMessages({ max_tokens: 1, ...body })), catalog.partTokens(model.id));
}

/** Punctuation-dense text: our estimate (≈ 4 bytes a token) and the simulated tokenizer disagree on it. */
const DENSE = "a.b,c;d:e!f?g ".repeat(40);

describe("POST /messages/count_tokens: who may count", () => {
  it("a management key is refused with 403 in Anthropic's shape, before its body is read", async () => {
    const { accountId } = await newAccount(5);
    const management = await admin<{ key: string }>("/keys", { account: accountId, management: true });
    const res = await countTokens(management.key, { model: CLAUDE, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "permission_error", message: expect.stringMatching(/management key.*cannot count tokens/) },
    });
  });

  it("a paid model's count needs credit left (402 billing_error at $0, or once the key's limit is reached); a free model's does not", async () => {
    const broke = await newAccount(0);
    const paid = await countTokens(broke.key, { model: CLAUDE, messages: [{ role: "user", content: "hi" }] });
    expect(paid.status).toBe(402);
    expect(await paid.json()).toMatchObject({ type: "error", error: { type: "billing_error", message: expect.stringMatching(/Insufficient credits/) } });
    const free = await countTokens(broke.key, { model: "openai/gpt-oss-20b:free", messages: [{ role: "user", content: "hi" }] });
    expect(free.status).toBe(200);
    expect(free.headers.get("x-token-count")).toBe("estimate");

    // A key with nothing left of its limit: the account has credit, the key may not spend it. (Its limit
    // is set to 0 in D1 before its first use, so no isolate has cached the key yet.)
    const limited = await newAccount(5, 1);
    await env.DB.prepare("UPDATE api_keys SET limit_nano = 0 WHERE hash = ?").bind(limited.hash).run();
    const res = await countTokens(limited.key, { model: CLAUDE, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ error: { type: "billing_error", message: expect.stringMatching(/This API key has reached its credit limit/) } });
  });

  it("over the key's COUNT_TOKENS_PER_MINUTE: 429 rate_limit_error with the rate-limit headers; another key of the account is not affected", async () => {
    const { accountId, key } = await newAccount(5);
    const other = await admin<{ key: string }>("/keys", { account: accountId });
    const body = { model: "openai/gpt-oss-20b", messages: [{ role: "user", content: "hi" }] };
    const vars = { COUNT_TOKENS_PER_MINUTE: "2" };
    expect((await countTokensWithVars(vars, key, body)).status).toBe(200);
    expect((await countTokensWithVars(vars, key, body)).status).toBe(200);
    const before = Date.now();
    const refused = await countTokensWithVars(vars, key, body);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: expect.stringMatching(/at most 2 token counts a minute per API key/) },
    });
    expect(refused.headers.get("x-ratelimit-limit")).toBe("2");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const reset = Number(refused.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThan(before);
    expect(reset).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // Per key: the account's other key counts on.
    expect((await countTokensWithVars(vars, other.key, body)).status).toBe(200);
  });

  it("a body over the model APIs' limit is refused with 413 request_too_large", async () => {
    const { key } = await newAccount(5);
    const res = await countTokens(key, JSON.stringify({ model: CLAUDE, messages: [{ role: "user", content: "x".repeat(MAX_MODEL_REQUEST_BYTES) }] }));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "request_too_large" } });
  });
});

describe("POST /messages/count_tokens: exact for Anthropic models, our estimate otherwise", () => {
  it("an Anthropic model with its carrier configured: the carrier's own count, equal to the input the same prompt is billed", async () => {
    const { key } = await newAccount(5);
    const tag = uniqueTag();
    const prompt = {
      model: CLAUDE,
      system: "You are terse.",
      messages: [{ role: "user", content: `${DENSE} [sim tag=${tag}]` }],
      tools: [{ name: "lookup", description: "Look it up", input_schema: { type: "object", properties: { q: { type: "string" } } } }],
    };
    const res = await countTokens(key, prompt);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-token-count")).toBe("exact");
    expect(res.headers.get("x-token-count-fallback")).toBeNull();
    const counted = ((await res.json()) as { input_tokens: number }).input_tokens;

    // The carrier was asked at its count endpoint, with the prompt and no generation fields.
    const [asked] = await simRequests(tag);
    expect(asked!.path).toBe("/anthropic/v1/messages/count_tokens");
    expect(asked!.headers).toMatchObject({ x_api_key: true, anthropic_version: true });
    expect(Object.keys(asked!.body).sort()).toEqual(["messages", "model", "system", "tools"]);
    expect(asked!.body.model).toBe("claude-haiku-4-5-20251001");

    // Exact: what a completion of the same prompt is billed as input (not our estimate, which differs here).
    const completion = await call("/api/v1/messages", { method: "POST", headers: headers(key), body: JSON.stringify({ ...prompt, max_tokens: 20 }) });
    expect(completion.status).toBe(200);
    const usage = ((await completion.json()) as { usage: Record<string, number> }).usage;
    expect(counted).toBe(usage.input_tokens! + usage.cache_read_input_tokens! + usage.cache_creation_input_tokens!);
    expect(counted).not.toBe(await estimateOf(prompt));
  });

  it("a model whose carriers do not count: our estimate, said so in X-Token-Count; no carrier asked", async () => {
    const { key } = await newAccount(5);
    const tag = uniqueTag();
    const prompt = { model: "openai/gpt-oss-20b", messages: [{ role: "user", content: `${DENSE} [sim tag=${tag}]` }] };
    const res = await countTokens(key, prompt);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-token-count")).toBe("estimate");
    expect(await res.json()).toEqual({ input_tokens: await estimateOf(prompt) });
    expect(await simRequests(tag)).toEqual([]);
  });

  it("an Anthropic model whose carrier is not configured: our estimate, no carrier asked", async () => {
    const { key } = await newAccount(5);
    const tag = uniqueTag();
    const prompt = { model: CLAUDE, messages: [{ role: "user", content: `${DENSE} [sim tag=${tag}]` }] };
    const res = await countTokensWithVars({ CARRIER_KEY_ANTHROPIC: "" }, key, prompt);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-token-count")).toBe("estimate");
    expect(res.headers.get("x-token-count-fallback")).toBeNull();
    expect(await res.json()).toEqual({ input_tokens: await estimateOf(prompt) });
    expect(await simRequests(tag)).toEqual([]);
  });

  it.each([
    ["a carrier 500", "[sim status=500]", /Anthropic's count failed: HTTP 500/],
    ["a carrier 429", "[sim status=429]", /Anthropic's count failed: HTTP 429/],
    ["a carrier that does not answer in time", "[sim hang]", /Anthropic's count failed: the carrier did not respond in time/],
  ])("%s: our estimate, the fallback named in X-Token-Count-Fallback", async (_name, directive, fallback) => {
    const { key } = await newAccount(5);
    const tag = uniqueTag();
    const prompt = { model: CLAUDE, messages: [{ role: "user", content: `${DENSE} ${directive} [sim tag=${tag}]` }] };
    const res = await countTokens(key, prompt);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-token-count")).toBe("estimate");
    expect(res.headers.get("x-token-count-fallback")).toMatch(fallback);
    expect(await res.json()).toEqual({ input_tokens: await estimateOf(prompt) });
    expect(await simRequests(tag)).toHaveLength(1);
  });

  it("a carrier 400 (the caller's input) is the caller's 400 in Anthropic's shape, not an estimate", async () => {
    const { key } = await newAccount(5);
    const res = await countTokens(key, { model: CLAUDE, messages: [{ role: "user", content: "Bad [sim status=400]" }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/^Carrier Anthropic rejected the request: HTTP 400/) },
    });
  });
});
