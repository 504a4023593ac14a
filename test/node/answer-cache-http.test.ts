import { describe, it, expect, beforeAll, afterAll } from "vitest";
import OpenAI from "openai";
import { validateResponse } from "../contract/contract.ts";
import { bearer, localD1, newAccount, startServiceFixture, waitForGeneration, type ServiceFixture } from "./service-fixture.ts";

// Cached answers over real HTTP (docs/caching.md), the service started as `npm start` starts it, driven by
// the official openai client with OpenRouter's header: the second identical request is a HIT, free, its
// record naming the first (the contract's response_cache_source_id), for a whole answer and a stream.
let f: ServiceFixture;
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

beforeAll(async () => {
  f = await startServiceFixture("answer-cache");
});
afterAll(async () => {
  await f?.stop();
});

const client = (apiKey: string) =>
  new OpenAI({ apiKey, baseURL: `${f.url}/api/v1`, maxRetries: 0, timeout: 20_000, defaultHeaders: { "X-OpenRouter-Cache": "true" } });

/** Waits (bounded) until the account's cache index holds `count` entries (the store runs after the answer). */
async function stored(accountId: string, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [row] = await localD1<{ n: number }>(f, `SELECT count(*) AS n FROM answer_cache_entries WHERE account_id = '${accountId}'`);
    if ((row?.n ?? 0) >= count) return;
    if (Date.now() > deadline) throw new Error(`${row?.n ?? 0} of ${count} cache entries`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The account's total usage in USD (`/credits`). */
async function usage(key: string): Promise<number> {
  const res = await fetch(`${f.url}/api/v1/credits`, { headers: bearer(key) });
  return ((await res.json()) as { data: { total_usage: number } }).data.total_usage;
}

describe("answer cache over HTTP with the openai client", () => {
  it("a whole answer, then a stream: each served twice with one charge, the hit recorded from its source", async () => {
    const a = await newAccount(f, 5);
    const openai = client(a.key);
    const body = { model: LLAMA, messages: [{ role: "user" as const, content: "cache over http [sim tokens=6]" }] };
    const first = await openai.chat.completions.create(body).withResponse();
    expect(first.response.headers.get("x-openrouter-cache-status")).toBe("MISS");
    await stored(a.id, 1);
    const second = await openai.chat.completions.create(body).withResponse();
    expect(second.response.headers.get("x-openrouter-cache-status")).toBe("HIT");
    expect(second.data.choices[0]!.message.content).toBe(first.data.choices[0]!.message.content);
    expect((second.data.usage as unknown as { cost: number }).cost).toBe(0);

    const streamBody = { ...body, stream: true as const };
    const collect = async () => {
      const { data: stream, response } = await openai.chat.completions.create(streamBody).withResponse();
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      return { text, status: response.headers.get("x-openrouter-cache-status"), id: response.headers.get("x-generation-id")! };
    };
    const s1 = await collect();
    expect(s1.status).toBe("MISS");
    await stored(a.id, 2);
    const s2 = await collect();
    expect(s2.status).toBe("HIT");
    expect(s2.text).toBe(s1.text);

    const record = async (id: string) => (await (await waitForGeneration(f, a.key, id)).json()) as { data: Record<string, unknown> };
    const hit = await record(second.data.id);
    expect(validateResponse("/generation", "GET", 200, "application/json", hit)).toEqual([]);
    expect(hit.data).toMatchObject({ response_cache_source_id: first.data.id, total_cost: 0 });
    expect((await record(s2.id)).data).toMatchObject({ response_cache_source_id: s1.id, total_cost: 0 });
    const charged = ((await record(first.data.id)).data.total_cost as number) + ((await record(s1.id)).data.total_cost as number);
    expect(Math.round((await usage(a.key)) * 1e9)).toBe(Math.round(charged * 1e9));
  });
});
