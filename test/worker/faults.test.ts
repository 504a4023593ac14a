import { describe, it, expect } from "vitest";
import { uncachedCost, chat, newAccount, settled, generation, user } from "./helpers";
// Client disconnects are tested over real HTTP in test/node/reliability.test.ts: the in-process
// test harness does not propagate a caller's cancel into the Worker.
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";
import { completionEstimate, deltas } from "./estimate-oracle";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const [FIRST, SECOND] = catalog.endpoints(LLAMA);
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);

describe("carrier faults before the first byte fall back, and a lone failing carrier is reported", () => {
  // Each fault on the cheapest carrier only: the next one serves and only its answer is charged.
  for (const fault of ["status=429", "status=500", "status=502", "status=503", "hang", "reset_after=0", "malformed", "big=9000000"]) {
    it(`non-stream, ${fault} on the first carrier → served by the second, charged once`, async () => {
      const a = await newAccount(10);
      const tag = uniqueTag();
      const res = await chat(a.key, { model: LLAMA, ...user(`x [sim carrier=${FIRST!.provider} ${fault}] [sim tag=${tag}]`) });
      const body = (await res.json()) as Json;
      expect(res.status).toBe(200);
      expect(body.provider).toBe(SECOND!.providerEntry.name);
      const t = await settled(a.accountId);
      expect(nano(t.total_usage)).toBe(uncachedCost(body.usage.prompt_tokens, body.usage.completion_tokens, SECOND!));
      const g = await generation(a.key, body.id);
      expect(g).toMatchObject({ status: 200, provider_name: SECOND!.providerEntry.name, total_cost: body.usage.cost });
    });
  }

  for (const fault of ["status=429", "status=503", "hang", "reset_after=0"]) {
    it(`stream, ${fault} on the first carrier → the stream comes from the second`, async () => {
      const a = await newAccount(10);
      const res = await chat(a.key, { model: LLAMA, stream: true, ...user(`x [sim carrier=${FIRST!.provider} ${fault}] [sim tokens=4]`) });
      expect(res.status).toBe(200);
      const events = await readSse(res);
      expect(events.at(-1)).toBe("[DONE]");
      expect((events[0] as Json).provider).toBe(SECOND!.providerEntry.name);
      expect(events.some((e) => e !== "[DONE]" && e.error)).toBe(false);
      await settled(a.accountId);
      expect((await generation(a.key, res.headers.get("x-generation-id")!)).status).toBe(200);
    });
  }
});

describe("stream faults after the first byte never fall back and never end cleanly", () => {
  it("a malformed chunk mid-stream ends with an error chunk; no second carrier is asked", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user(`x [sim malformed tokens=10 tag=${tag}]`) });
    const events = await readSse(res);
    const err = events.at(-2) as Json;
    expect(events.at(-1)).toBe("[DONE]");
    expect(err.error).toMatchObject({ code: 502 });
    expect(err.error.message).toMatch(/malformed/);
    expect(err.choices[0].finish_reason).toBe("error");
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual([FIRST!.provider]);
    const t = await settled(a.accountId);
    const g = await generation(a.key, res.headers.get("x-generation-id")!);
    expect(g).toMatchObject({ status: 502, total_cost: 0, insured: true });
    expect(t.total_usage).toBe(0);
  });

  it("garbage SSE lines are skipped; the stream completes with usage", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user("x [sim garbage tokens=6]") });
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1) as Json[];
    expect(chunks.some((c) => c.error)).toBe(false);
    expect(chunks.at(-1)!.usage.completion_tokens).toBe(6);
    expect(
      chunks
        .map((c) => c.choices[0]?.delta?.content ?? "")
        .join("")
        .trim()
        .split(" "),
    ).toHaveLength(6);
  });

  it("a stream without usage ends without a usage chunk and is charged the estimate of what was delivered", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user("x [sim no_usage tokens=9]") });
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.some((e) => e !== "[DONE]" && e.usage)).toBe(false);
    const t = await settled(a.accountId);
    const g = await generation(a.key, res.headers.get("x-generation-id")!);
    const estimate = completionEstimate(deltas(events));
    expect(estimate).toBeGreaterThanOrEqual(9);
    expect(g).toMatchObject({ status: 200, tokens_completion: estimate, usage_source: "estimate", insured: false });
    expect(nano(t.total_usage)).toBe(uncachedCost(g.tokens_prompt as number, estimate, FIRST!));
    expect(nano(g.total_cost as number)).toBe(nano(t.total_usage));
  });

  it("a non-stream answer without usage still reports usage with cost (estimated) and charges it", async () => {
    const a = await newAccount(10);
    const body = (await (await chat(a.key, { model: LLAMA, ...user("x [sim no_usage tokens=9]") })).json()) as Json;
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    const t = await settled(a.accountId);
    expect(nano(t.total_usage)).toBe(uncachedCost(body.usage.prompt_tokens, body.usage.completion_tokens, FIRST!));
  });

  it("a carrier that goes silent mid-stream is cut off by the idle timeout with an error chunk", async () => {
    const a = await newAccount(10);
    // tps=0.2: one token every 5 s, longer than the 2 s test timeout.
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user("x [sim tokens=5 tps=0.2]") });
    const events = await readSse(res);
    expect((events.at(-2) as Json).error.message).toMatch(/timeout/);
    await settled(a.accountId);
    expect((await generation(a.key, res.headers.get("x-generation-id")!)).status).toBe(502);
  });
});
