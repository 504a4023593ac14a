import { describe, it, expect } from "vitest";
import { uncachedCost, chat, newAccount, settled, generation, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";
import { completionEstimate, deltas } from "./estimate-oracle";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { nanoToUsd } from "../../src/catalog/money";

const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

describe("streamed completions", () => {
  it("rewrites every chunk and ends with a usage chunk carrying the cost, then [DONE]", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, stream: true, stream_options: { include_usage: false }, ...user(`go [sim tokens=5 tag=${tag}]`) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const genId = res.headers.get("x-generation-id")!;
    expect(genId).toMatch(/^gen-/);
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1) as Record<string, any>[];
    const endpoint = catalog.endpoints(LLAMA)[0]!;
    for (const c of chunks) expect(c).toMatchObject({ id: genId, model: LLAMA, provider: endpoint.providerEntry.name });
    expect(
      chunks
        .map((c) => c.choices[0]?.delta?.content ?? "")
        .join("")
        .trim()
        .split(" "),
    ).toHaveLength(5);
    expect(chunks.filter((c) => c.usage)).toHaveLength(1);
    const last = chunks.at(-1)!;
    expect(last.usage.completion_tokens).toBe(5);
    const expected = uncachedCost(last.usage.prompt_tokens, 5, endpoint);
    expect(last.usage.cost).toBe(nanoToUsd(expected));
    // The carrier was asked for usage even though the caller said otherwise.
    expect((await simRequests(tag))[0]!.body.stream_options).toEqual({ include_usage: true });
    const t = await settled(a.accountId);
    expect(Math.round(t.total_usage * 1e9)).toBe(expected);
    const g = await generation(a.key, genId);
    expect(g).toMatchObject({ streamed: true, status: 200, tokens_completion: 5, total_cost: last.usage.cost, finish_reason: "stop" });
  });

  it("sends X-Generation-Id with the headers, before the stream ends", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user("slow [sim tokens=6 tps=20]") });
    const id = res.headers.get("x-generation-id");
    expect(id).toMatch(/^gen-/);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain(id!);
    await reader.cancel();
  });

  it("a carrier failure mid-stream ends with an error chunk and [DONE]; nothing is charged, the delivered output is recorded", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user("x [sim tokens=20 reset_after=4]") });
    expect(res.status).toBe(200);
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const errorChunk = events.at(-2) as Record<string, any>;
    expect(errorChunk.error.code).toBe(502);
    expect(errorChunk.error.message).toMatch(/lost mid-stream/);
    expect(errorChunk.choices[0].finish_reason).toBe("error");
    const delivered = events.filter((e) => e !== "[DONE]" && e.choices?.[0]?.delta?.content).length;
    expect(delivered).toBe(3); // role chunk + 3 tokens = 4 chunks before the reset
    const t = await settled(a.accountId);
    const g = await generation(a.key, res.headers.get("x-generation-id")!);
    expect(g).toMatchObject({ status: 502, total_cost: 0, insured: true, usage_source: "estimate" });
    expect(g.tokens_completion).toBe(completionEstimate(deltas(events)));
    expect(t.total_usage).toBe(0);
  });

  it("a stream request no carrier serves gets a JSON error, not a stream", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user("x [sim status=503]") });
    expect(res.status).toBe(503);
    expect(((await res.json()) as Record<string, any>).error.code).toBe(503);
  });
});
