import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { call, chat, debited, generation, newAccount, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";
import { accountWithManagementKey, jsonOf } from "./preset-helpers";

// Cached answers (docs/caching.md): `X-OpenRouter-Cache: true` serves an identical request of the same
// account from the cache — one carrier call for two requests, the second free, recorded with the first's id.
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const CACHE = { "x-openrouter-cache": "true" };
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Waits (bounded) until the account's cache index holds `count` entries: the store runs after the answer, under waitUntil. */
async function stored(accountId: string, count = 1, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await env.DB.prepare("SELECT count(*) AS n FROM answer_cache_entries WHERE account_id = ?").bind(accountId).first<{ n: number }>();
    if ((row?.n ?? 0) >= count) return;
    if (Date.now() > deadline) throw new Error(`account ${accountId}: ${row?.n ?? 0} of ${count} cache entries after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The text an SSE chat stream delivered. */
function streamedText(events: Awaited<ReturnType<typeof readSse>>): string {
  return events.map((e) => (e === "[DONE]" ? "" : (e.choices?.[0]?.delta?.content ?? ""))).join("");
}

describe("answer cache on /chat/completions", () => {
  it("non-stream: MISS then HIT, one carrier call, the hit free with zero usage, debited once, recorded with the source's id", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const body = { model: LLAMA, temperature: 0, ...user(`cache me [sim tokens=7 tag=${tag}]`) };
    const first = await chat(a.key, body, CACHE);
    const one = (await first.json()) as Json;
    expect(first.status).toBe(200);
    expect(first.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(first.headers.get("x-openrouter-cache-ttl")).toBe("300");
    expect(first.headers.get("access-control-expose-headers")).toContain("X-OpenRouter-Cache-Status"); // a browser's client reads it
    await stored(a.accountId);
    const second = await chat(a.key, body, CACHE);
    const two = (await second.json()) as Json;
    expect(second.status).toBe(200);
    expect(second.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(second.headers.get("x-switchyard-cache-source")).toBe(one.id);
    expect(two.id).not.toBe(one.id);
    expect(two.id).toBe(second.headers.get("x-generation-id"));
    expect(two.choices).toEqual(one.choices);
    expect(two.model).toBe(LLAMA);
    expect(two.provider).toBe(one.provider);
    expect(two.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 });
    expect(await simRequests(tag)).toHaveLength(1);
    const t = await debited(a.accountId, 2);
    const firstRecord = await generation(a.key, one.id);
    const hitRecord = await generation(a.key, two.id);
    expect(Math.round(t.total_usage * 1e9)).toBe(Math.round((firstRecord.total_cost as number) * 1e9));
    expect(firstRecord.total_cost).toBeGreaterThan(0);
    expect(firstRecord).toMatchObject({ response_cache_source_id: null, cache_hit: false });
    expect(hitRecord).toMatchObject({ response_cache_source_id: one.id, cache_hit: true, total_cost: 0, tokens_prompt: 0, tokens_completion: 0, status: 200 });
    expect(hitRecord.finish_reason).toBe(firstRecord.finish_reason);
  });

  it("stream: MISS then HIT replayed as the same stream, one carrier call, the hit free, debited once", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const body = { model: LLAMA, stream: true, ...user(`stream me [sim tokens=9 tag=${tag}]`) };
    const first = await chat(a.key, body, CACHE);
    expect(first.headers.get("x-openrouter-cache-status")).toBe("MISS");
    const one = await readSse(first);
    await stored(a.accountId);
    const second = await chat(a.key, body, CACHE);
    expect(second.status).toBe(200);
    expect(second.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(second.headers.get("x-openrouter-cache-status")).toBe("HIT");
    const two = await readSse(second);
    expect(streamedText(two)).toBe(streamedText(one));
    expect(streamedText(two).length).toBeGreaterThan(0);
    expect(two[two.length - 1]).toBe("[DONE]");
    const chunks = two.filter((e): e is Json => e !== "[DONE]");
    const genId = second.headers.get("x-generation-id")!;
    expect(chunks.every((c) => c.id === genId)).toBe(true);
    expect(chunks.find((c) => c.usage)?.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, cost: 0 });
    expect(await simRequests(tag)).toHaveLength(1);
    const t = await debited(a.accountId, 2);
    const firstRecord = await generation(a.key, first.headers.get("x-generation-id")!);
    expect(Math.round(t.total_usage * 1e9)).toBe(Math.round((firstRecord.total_cost as number) * 1e9));
    expect(await generation(a.key, genId)).toMatchObject({ response_cache_source_id: firstRecord.id, total_cost: 0, streamed: true });
  });

  it("the key: another account, another parameter or the other stream mode is a MISS; without the header nothing is cached", async () => {
    const a = await newAccount(10);
    const b = await newAccount(10);
    const tag = uniqueTag();
    const body = { model: LLAMA, ...user(`keyed [sim tokens=3 tag=${tag}]`) };
    expect((await chat(a.key, body, CACHE)).headers.get("x-openrouter-cache-status")).toBe("MISS");
    await stored(a.accountId);
    expect((await chat(b.key, body, CACHE)).headers.get("x-openrouter-cache-status")).toBe("MISS"); // never across accounts
    expect((await chat(a.key, { ...body, temperature: 0.5 }, CACHE)).headers.get("x-openrouter-cache-status")).toBe("MISS");
    const streamed = await chat(a.key, { ...body, stream: true }, CACHE);
    expect(streamed.headers.get("x-openrouter-cache-status")).toBe("MISS");
    await streamed.text();
    const plain = await chat(a.key, body);
    expect(plain.headers.get("x-openrouter-cache-status")).toBeNull();
    await plain.text();
    const off = await chat(a.key, body, { "x-openrouter-cache": "false" });
    expect(off.headers.get("x-openrouter-cache-status")).toBeNull();
    await off.text();
    expect(await simRequests(tag)).toHaveLength(6);
  });

  it("never cached: n>1 and media by URL are BYPASS, named, and go to the carrier every time", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const body = { model: LLAMA, n: 2, ...user(`twice [sim tokens=2 tag=${tag}]`) };
    for (let i = 0; i < 2; i++) {
      const res = await chat(a.key, body, CACHE);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-openrouter-cache-status")).toBe("BYPASS");
      expect(res.headers.get("x-switchyard-cache-reason")).toMatch(/^n>1/);
      await res.text();
    }
    expect(await simRequests(tag)).toHaveLength(2);
    const image = {
      model: "google/gemini-2.5-flash",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is it" },
            { type: "image_url", image_url: { url: "https://example.test/a.png" } },
          ],
        },
      ],
    };
    const res = await chat(a.key, image, CACHE);
    expect(res.headers.get("x-switchyard-cache-reason")).toMatch(/^media by URL/);
    await res.text();
  });

  it("an answer that is not whole is never stored: a stream the carrier cut, an answer with no finish; the next identical request is a MISS", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const cut = { model: LLAMA, stream: true, ...user(`cut [sim tokens=20 reset_after=3 tag=${tag}]`) };
    const unfinished = { model: LLAMA, ...user(`unfinished [sim tokens=4 no_finish tag=${tag}]`) };
    await (await chat(a.key, cut, CACHE)).text();
    await (await chat(a.key, unfinished, CACHE)).text();
    // A whole answer after them is stored; by then theirs would have been (each store starts before its own answer ends).
    await (await chat(a.key, { model: LLAMA, ...user(`whole [sim tokens=2 tag=${tag}]`) }, CACHE)).text();
    await stored(a.accountId);
    const again = await chat(a.key, cut, CACHE);
    expect(again.headers.get("x-openrouter-cache-status")).toBe("MISS");
    await again.text();
    const again2 = await chat(a.key, unfinished, CACHE);
    expect(again2.headers.get("x-openrouter-cache-status")).toBe("MISS");
    await again2.text();
    expect(await simRequests(tag)).toHaveLength(5);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM answer_cache_entries WHERE account_id = ?").bind(a.accountId).first<{ n: number }>();
    expect(rows?.n).toBe(1);
  });

  it("per key: a key with response_cache_ttl_seconds caches its requests without the header; false opts a request out; null turns it off", async () => {
    const a = await accountWithManagementKey(10);
    const keysApi = (method: string, path: string, body: unknown) =>
      call(`/api/v1/keys${path}`, { method, headers: { authorization: `Bearer ${a.mgmt}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const created = await jsonOf(await keysApi("POST", "", { name: "cached", response_cache_ttl_seconds: 120 }), 201);
    expect(created.data.response_cache_ttl_seconds).toBe(120);
    const key = created.key as string;
    const tag = uniqueTag();
    const body = { model: LLAMA, ...user(`per key [sim tokens=3 tag=${tag}]`) };
    const first = await chat(key, body);
    expect(first.headers.get("x-openrouter-cache-status")).toBe("MISS");
    expect(first.headers.get("x-openrouter-cache-ttl")).toBe("120");
    await first.text();
    await stored(a.accountId);
    const hit = await chat(key, body);
    expect(hit.headers.get("x-openrouter-cache-status")).toBe("HIT");
    await hit.text();
    const out = await chat(key, body, { "x-openrouter-cache": "false" });
    expect(out.headers.get("x-openrouter-cache-status")).toBeNull();
    await out.text();
    expect(
      (await jsonOf(await keysApi("PATCH", `/${created.data.hash}`, { response_cache_ttl_seconds: null }), 200)).data.response_cache_ttl_seconds,
    ).toBeNull();
    const off = await chat(key, body);
    expect(off.headers.get("x-openrouter-cache-status")).toBeNull();
    await off.text();
    expect(await simRequests(tag)).toHaveLength(3);
    expect((await keysApi("PATCH", `/${created.data.hash}`, { response_cache_ttl_seconds: 0 })).status).toBe(400);
  });

  it("a hit is answered before the ledger: a key at its limit still gets its hits (free), while anything else is a 402", async () => {
    const a = await accountWithManagementKey(10);
    const keysApi = (method: string, path: string, body: unknown) =>
      call(`/api/v1/keys${path}`, { method, headers: { authorization: `Bearer ${a.mgmt}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const created = await jsonOf(await keysApi("POST", "", { name: "limited" }), 201);
    const key = created.key as string;
    const tag = uniqueTag();
    const body = { model: LLAMA, ...user(`before the ledger [sim tokens=3 tag=${tag}]`) };
    await (await chat(key, body, CACHE)).text();
    await stored(a.accountId);
    await jsonOf(await keysApi("PATCH", `/${created.data.hash}`, { limit: 0 }), 200);
    const refused = await chat(key, { ...body, temperature: 0.2 }, CACHE);
    expect(refused.status).toBe(402);
    await refused.text();
    const hit = await chat(key, body, CACHE);
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(((await hit.json()) as Json).usage.cost).toBe(0);
    expect(await simRequests(tag)).toHaveLength(1);
  });

  it("a bad X-OpenRouter-Cache or X-OpenRouter-Cache-TTL is a 400 naming the header; nothing is charged", async () => {
    const a = await newAccount(10);
    const body = { model: LLAMA, ...user("ttl [sim tokens=2]") };
    for (const headers of [
      { "x-openrouter-cache": "yes" },
      { ...CACHE, "x-openrouter-cache-ttl": "0" },
      { ...CACHE, "x-openrouter-cache-ttl": "86401" },
      { ...CACHE, "x-openrouter-cache-ttl": "1.5" },
    ]) {
      const res = await chat(a.key, body, headers);
      const json = (await res.json()) as Json;
      expect(res.status).toBe(400);
      expect(json.error.message).toMatch(/X-OpenRouter-Cache/);
    }
    const ok = await chat(a.key, body, { ...CACHE, "x-openrouter-cache-ttl": "60" });
    expect(ok.headers.get("x-openrouter-cache-ttl")).toBe("60");
    await ok.text();
  });
});

/** A request of each other API, its user text as given. */
const OTHER_APIS = {
  messages: (text: string, stream: boolean) => ({
    path: "/messages",
    body: { model: LLAMA, max_tokens: 50, stream, messages: [{ role: "user", content: text }] },
  }),
  responses: (text: string, stream: boolean) => ({ path: "/responses", body: { model: LLAMA, stream, input: [{ role: "user", content: text }] } }),
};

/** Posts with the cache header. */
function postCached(path: string, key: string, body: unknown) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...CACHE },
    body: JSON.stringify(body),
  });
}

describe("answer cache on /messages, /responses and /embeddings", () => {
  for (const api of Object.keys(OTHER_APIS) as Array<keyof typeof OTHER_APIS>)
    for (const stream of [false, true])
      it(`${api} (${stream ? "stream" : "non-stream"}): one carrier call for two requests, the same answer in the API's shape, the second free`, async () => {
        const a = await newAccount(10);
        const tag = uniqueTag();
        const { path, body } = OTHER_APIS[api](`again [sim tokens=5 tag=${tag}]`, stream);
        const first = await postCached(path, a.key, body);
        const one = await first.text();
        expect(first.status, one).toBe(200);
        expect(first.headers.get("x-openrouter-cache-status")).toBe("MISS");
        await stored(a.accountId);
        const second = await postCached(path, a.key, body);
        const two = await second.text();
        expect(second.status, two).toBe(200);
        expect(second.headers.get("x-openrouter-cache-status")).toBe("HIT");
        if (stream) expect(second.headers.get("content-type")).toMatch(/text\/event-stream/);
        // The same answer, under the new generation's id.
        const genOne = first.headers.get("x-generation-id")!;
        const genTwo = second.headers.get("x-generation-id")!;
        expect(stripIds(two, genTwo)).toBe(stripIds(stripUsage(one), genOne));
        expect(await simRequests(tag)).toHaveLength(1);
        const t = await debited(a.accountId, 2);
        const firstRecord = await generation(a.key, genOne);
        expect(Math.round(t.total_usage * 1e9)).toBe(Math.round((firstRecord.total_cost as number) * 1e9));
        expect(await generation(a.key, genTwo)).toMatchObject({ response_cache_source_id: genOne, total_cost: 0, inbound_api: api });
      });

  it("embeddings: one carrier call for two requests, the same vectors, the second free and recorded from the first", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const body = { model: "openai/text-embedding-3-small", input: [`vector me [sim tag=${tag}]`, "and me"] };
    const first = await postCached("/embeddings", a.key, body);
    const one = (await first.json()) as Json;
    expect(first.status).toBe(200);
    expect(first.headers.get("x-openrouter-cache-status")).toBe("MISS");
    await stored(a.accountId);
    const second = await postCached("/embeddings", a.key, body);
    const two = (await second.json()) as Json;
    expect(second.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(two.data).toEqual(one.data);
    expect(two.usage).toEqual({ prompt_tokens: 0, total_tokens: 0, cost: 0 });
    expect(await simRequests(tag)).toHaveLength(1);
    const t = await debited(a.accountId, 2);
    expect(Math.round(t.total_usage * 1e9)).toBe(Math.round(one.usage.cost * 1e9));
    expect(await generation(a.key, two.id)).toMatchObject({ response_cache_source_id: one.id, total_cost: 0, inbound_api: "embeddings" });
  });
});

/** An answer's text with its generation id (and the ids derived from it) made neutral, for comparing two answers. */
function stripIds(text: string, genId: string): string {
  return text
    .split(genId)
    .join("GEN")
    .replace(/\b(msg|resp)_[0-9a-f]+/g, "$1_ID")
    .replace(/"(created|created_at|completed_at)":\s*\d+/g, '"$1":0');
}

/** An answer's text with every token count and cost as a hit shows them (zero). */
function stripUsage(text: string): string {
  return text.replace(/"(prompt_tokens|completion_tokens|total_tokens|input_tokens|output_tokens|cost|reasoning_tokens|cached_tokens)":\s*[\d.e-]+/g, '"$1":0');
}
