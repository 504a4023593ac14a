import { describe, it, expect } from "vitest";
import { call, debited, generation, get, newAccount } from "./helpers";
import { readSse } from "./sse";
import { simRequests, uniqueTag } from "./sim";

// A request naming a provider's own id (an alias the catalog declares) is served as the catalog model on
// every inbound API: the carrier gets its upstream id, the caller's answer and the record name the catalog
// id (as OpenRouter names its own id), and the bill is the catalog's published price, exact to the nano-USD.
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);

function post(path: string, key: string, body: unknown) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Each API's request for one question, the model named as given. */
const REQUEST = {
  chat: (model: string, text: string) => ["/chat/completions", { model, max_tokens: 100, messages: [{ role: "user", content: text }] }] as const,
  messages: (model: string, text: string) => ["/messages", { model, max_tokens: 100, messages: [{ role: "user", content: text }] }] as const,
  responses: (model: string, text: string) => ["/responses", { model, max_output_tokens: 100, input: text }] as const,
};

// Published prices in nano-USD per token (USD per 1M × 1000): docs/catalog.md names the pages.
const CASES = [
  { api: "chat", alias: "claude-haiku-4-5-20251001", id: "anthropic/claude-haiku-4.5", upstream: "claude-haiku-4-5-20251001", input: 1000, output: 5000 },
  { api: "messages", alias: "claude-opus-5-5", id: "anthropic/claude-opus-5.5", upstream: "claude-opus-5-5", input: 4000, output: 20000 },
  { api: "responses", alias: "gpt-6.1-sol", id: "openai/gpt-6.1-sol", upstream: "gpt-6.1-sol", input: 2000, output: 10000 },
  { api: "chat", alias: "gpt-6.1-sol-2026-09-29", id: "openai/gpt-6.1-sol", upstream: "gpt-6.1-sol", input: 2000, output: 10000 },
] as const;

describe("a request by alias", () => {
  it.each(CASES)(
    "$api with $alias: served as $id, billed at its published prices, recorded under its id",
    async ({ api, alias, id, upstream, input, output }) => {
      const a = await newAccount(5);
      const tag = uniqueTag();
      const [path, body] = REQUEST[api](alias, `Name three rivers [sim tokens=7 tag=${tag}]`);
      const res = await post(path, a.key, body);
      expect(res.status).toBe(200);
      const json = (await res.json()) as Json;
      expect(json.model).toBe(id);
      const [sent] = await simRequests(tag);
      expect(sent!.body.model).toBe(upstream);
      const t = await debited(a.accountId);
      const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
      expect(g).toMatchObject({ model: id, tokens_completion: 7, native_tokens_cached: 0 });
      expect(g.native_tokens_cache_write ?? 0).toBe(0);
      const cost = g.tokens_prompt * input + g.tokens_completion * output;
      expect(cost).toBeGreaterThan(0);
      expect(nano(t.total_usage)).toBe(cost);
      expect(nano(g.total_cost)).toBe(cost);
    },
  );

  it("a streamed chat answer names the catalog id in every chunk", async () => {
    const a = await newAccount(5);
    const res = await post("/chat/completions", a.key, { model: "claude-haiku-4-5", stream: true, messages: [{ role: "user", content: "hi [sim tokens=3]" }] });
    expect(res.status).toBe(200);
    const chunks = (await readSse(res)).filter((d): d is Json => d !== "[DONE]");
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.model === "anthropic/claude-haiku-4.5")).toBe(true);
  });

  it("counts tokens and embeds by alias too", async () => {
    const a = await newAccount(5);
    const counted = await post("/messages/count_tokens", a.key, { model: "claude-opus-5-5", messages: [{ role: "user", content: "How many tokens?" }] });
    expect(counted.status).toBe(200);
    expect(((await counted.json()) as Json).input_tokens).toBeGreaterThan(0);
    const embedded = await post("/embeddings", a.key, { model: "text-embedding-3-small", input: "a sentence" });
    expect(embedded.status).toBe(200);
    const json = (await embedded.json()) as Json;
    expect(json.model).toBe("openai/text-embedding-3-small");
    const g = (await generation(a.key, embedded.headers.get("x-generation-id")!)) as Json;
    expect(g.model).toBe("openai/text-embedding-3-small");
  });

  it.each([
    { api: "chat", error: (j: Json) => j.error.message },
    { api: "messages", error: (j: Json) => (expect(j).toMatchObject({ type: "error", error: { type: "invalid_request_error" } }), j.error.message) },
    { api: "responses", error: (j: Json) => j.error.message },
  ] as const)("$api: an unknown name is a 400 that says so", async ({ api, error }) => {
    const a = await newAccount(5);
    const [path, body] = REQUEST[api]("claude-opus-9-9", "hi");
    const res = await post(path, a.key, body);
    expect(res.status).toBe(400);
    expect(error((await res.json()) as Json)).toMatch(/Model claude-opus-9-9 is not in the catalog\. GET \/api\/v1\/models lists the available models\./);
  });
});

describe("aliases are shown", () => {
  it("on GET /models (an extra field: OpenRouter's Model has none), and searchable", async () => {
    const list = (await (await get("/models")).json()) as { data: Json[] };
    const byId = new Map(list.data.map((m) => [m.id, m]));
    expect(byId.get("anthropic/claude-haiku-4.5")!.aliases).toEqual(["claude-haiku-4-5-20251001", "claude-haiku-4-5"]);
    expect(byId.get("openai/gpt-6.1-sol")!.aliases).toEqual(["gpt-6.1-sol", "gpt-6.1-sol-2026-09-29"]);
    expect(byId.get("meta-llama/llama-3.1-8b-instruct")!.aliases).toEqual([]);
    const found = (await (await get("/models?q=claude-opus-5-5")).json()) as { data: Json[] };
    expect(found.data.map((m) => m.id)).toEqual(["anthropic/claude-opus-5.5"]);
  });

  it("in the console's model list, whose search finds a model by alias", async () => {
    const html = await (await call("/models?q=gpt-6.1-sol-2026-09-29")).text();
    const listed = [...html.matchAll(/href="\/models\/([a-z0-9._-]+\/[a-z0-9._:-]+)"/g)].map((m) => m[1]);
    expect(listed).toEqual(["openai/gpt-6.1-sol"]);
  });

  it("on the model's console page", async () => {
    const res = await call("/models/anthropic/claude-haiku-4.5");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/<dd id="model-aliases"><code>claude-haiku-4-5-20251001<\/code>, <code>claude-haiku-4-5<\/code>/);
    // And where its prices were read, and when.
    expect(html).toMatch(
      /<dd id="model-sources"><a href="https:\/\/platform\.claude\.com\/docs\/zh-CN\/about-claude\/pricing"[^>]*>platform\.claude\.com<\/a> <span class="muted">on 2026-11-27<\/span>/,
    );
  });
});
