import { describe, it, expect } from "vitest";
import { uncachedCost, chat, debited, newAccount, settled, generation, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";
import { completionEstimate, deltas } from "./estimate-oracle";
import { chatWithVars } from "./with-vars";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { nanoToUsd } from "../../src/catalog/money";

const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const FIRST = catalog.endpoints(LLAMA)[0]!;
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);

/**
 * A stream the relay ended by a limit of its own is charged for what it delivered (as a caller who leaves
 * is), never insured: the estimate of the delivered output, at the price of the carrier that served.
 */
async function expectChargedAsDelivered(a: { key: string; accountId: string }, res: Response, events: Array<Json | "[DONE]">, says: RegExp) {
  const t = await debited(a.accountId);
  const g = await generation(a.key, res.headers.get("x-generation-id")!);
  expect(g).toMatchObject({ status: 502, finish_reason: "error", usage_source: "estimate", insured: false });
  expect(g.error_message).toMatch(says);
  expect(g.error_message).toMatch(/What was delivered is charged/);
  expect(g.tokens_completion).toBe(completionEstimate(deltas(events)));
  expect(g.tokens_completion).toBeGreaterThan(0);
  expect(nano(t.total_usage)).toBe(uncachedCost(g.tokens_prompt as number, g.tokens_completion as number, FIRST));
  expect(nano(g.total_cost as number)).toBe(nano(t.total_usage));
}

/** The stream's last two events: an error chunk in OpenRouter's form, then [DONE]. */
function expectErrorEnd(events: Array<Json | "[DONE]">, message: RegExp) {
  expect(events.at(-1)).toBe("[DONE]");
  const err = events.at(-2) as Json;
  expect(err.error).toMatchObject({ code: 502 });
  expect(err.error.message).toMatch(message);
  expect(err.choices[0].finish_reason).toBe("error");
}

describe("a bounded relay", () => {
  it("ends a stream whose event passes RELAY_MAX_EVENT_BYTES with a 502 error chunk, relaying the events before it; they are charged", async () => {
    const a = await newAccount(10);
    const { res, settled: done } = await chatWithVars({ RELAY_MAX_EVENT_BYTES: "100000" }, a.key, {
      model: LLAMA,
      stream: true,
      ...user("x [sim tokens=3 big=300000]"),
    });
    expect(res.status).toBe(200);
    const events = await readSse(res);
    expectErrorEnd(events, /RELAY_MAX_EVENT_BYTES \(100000 bytes\)/);
    // role chunk and the first two tokens; the third token is the oversized one.
    expect(events.slice(0, -2).map((e) => (e as Json).choices[0].delta.content)).toEqual([
      "",
      expect.stringMatching(/^ \w+$/),
      expect.stringMatching(/^ \w+$/),
    ]);
    await done();
    await expectChargedAsDelivered(a, res, events, /RELAY_MAX_EVENT_BYTES/);
  });

  it.each([
    // 5,000 tokens quickly: past 50,000 bytes long before the end.
    { limit: "RELAY_MAX_STREAM_BYTES", value: "50000", says: /RELAY_MAX_STREAM_BYTES \(50000 bytes\)/, directive: "tokens=5000 tps=1000" },
    // 200 tokens at 50/s: 4 s, never silent for CARRIER_TIMEOUT_MS (2 s).
    { limit: "RELAY_MAX_STREAM_MS", value: "300", says: /RELAY_MAX_STREAM_MS \(300 ms\)/, directive: "tokens=200 tps=50" },
    // Six tokens without a finish, then silence (the usage held back 20 s): past CARRIER_TIMEOUT_MS mid-stream.
    { limit: "CARRIER_TIMEOUT_MS", value: "500", says: /stopped sending \(timeout\)/, directive: "tokens=6 no_finish usage_delay_ms=20000" },
  ])("ends a stream past $limit with a 502 error chunk, aborts the carrier and charges what was delivered", async ({ limit, value, says, directive }) => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const { res, settled: done } = await chatWithVars({ [limit]: value }, a.key, { model: LLAMA, stream: true, ...user(`x [sim ${directive} tag=${tag}]`) });
    const events = await readSse(res);
    expectErrorEnd(events, says);
    expect((await simRequests(tag, { ms: 5000, until: "aborted" }))[0]!.outcome).toBe("aborted");
    await done();
    await expectChargedAsDelivered(a, res, events, says);
  });

  it("stops reading at the carrier's [DONE]: a carrier that keeps the connection open still gets a clean end, charged in full", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user(`x [sim tokens=4 linger tag=${tag}]`) });
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.some((e) => e !== "[DONE]" && e.error)).toBe(false);
    const usage = (events.at(-2) as Json).usage;
    expect(usage.completion_tokens).toBe(4);
    // The router closed the carrier's connection itself.
    expect((await simRequests(tag, { ms: 5000, until: "aborted" }))[0]!.outcome).toBe("aborted");
    const t = await settled(a.accountId);
    const g = await generation(a.key, res.headers.get("x-generation-id")!);
    expect(g).toMatchObject({ status: 200, finish_reason: "stop", tokens_completion: 4, usage_source: "carrier", insured: false });
    expect(nano(t.total_usage)).toBe(uncachedCost(usage.prompt_tokens, 4, FIRST));
  });

  it("keeps the carrier's connection when its body ends after [DONE]: streams one after another share one connection", async () => {
    const a = await newAccount(10);
    const tags = [1, 2, 3].map((i) => `${uniqueTag()}-${i}`);
    for (const tag of tags) {
      const res = await chat(a.key, { model: LLAMA, stream: true, ...user(`x [sim tokens=400 tag=${tag}]`) });
      expect((await readSse(res)).at(-1)).toBe("[DONE]");
      // Settled once the router is done with the carrier: its connection is free for the next request by then.
      await generation(a.key, res.headers.get("x-generation-id")!);
    }
    const records = (await Promise.all(tags.map((t) => simRequests(t)))).map((r) => r[0]!);
    expect(records.map((r) => r.outcome)).toEqual(["completed", "completed", "completed"]);
    expect(new Set(records.map((r) => r.connection)).size).toBe(1);
  });

  it("never sends a duplicate key: a carrier's own provider field is replaced by ours", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, stream: true, ...user("x [sim tokens=6 provider_field]") });
    const text = await res.text();
    const events = text.split("\n\n").filter((e) => e.startsWith("data: {"));
    expect(events.length).toBe(1 + 6 + 1 + 1);
    for (const e of events) {
      expect(e.match(/"provider":/g)).toHaveLength(1);
      expect(JSON.parse(e.slice(6)).provider).toBe(FIRST.providerEntry.name);
    }
    const usage = JSON.parse(events.at(-1)!.slice(6)).usage;
    expect(usage.cost).toBe(nanoToUsd(uncachedCost(usage.prompt_tokens, 6, FIRST)));
  });
});
