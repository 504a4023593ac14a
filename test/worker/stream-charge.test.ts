import { describe, it, expect } from "vitest";
import { uncachedCost, chat, debited, newAccount, settled, generation, user } from "./helpers";
import { readSse } from "./sse";
import { chatWithVars } from "./with-vars";
import { simRequests, uniqueTag } from "./sim";
import { completionEstimate, deltas, promptEstimate } from "./estimate-oracle";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

// Charging without the carrier's usage: the estimate counts every kind of generated output and every
// billed part of the request; against the simulator's true counts, truth ≤ estimate ≤ 2.5 × truth + 1.
const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const R1 = "deepseek/deepseek-r1-0528";
const GEMMA = "google/gemma-3-27b-it"; // image_tokens: 256 in the catalog
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);
const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather in a city",
      parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    },
  },
];

/** Sends a stream, reads it whole, waits until the ledger has its settle; returns the events, the record and the account's usage. */
async function streamed(body: Json) {
  const a = await newAccount(10);
  const res = await chat(a.key, { ...body, stream: true });
  expect(res.status).toBe(200);
  const events = await readSse(res);
  const t = await debited(a.accountId);
  const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
  return { events, g, usageNano: nano(t.total_usage) };
}

function expectWithinSimBound(estimate: number, truth: number) {
  expect(estimate).toBeGreaterThanOrEqual(truth);
  expect(estimate).toBeLessThanOrEqual(Math.ceil(2.5 * truth) + 1);
}

describe("a stream without the carrier's usage is charged for every kind of output delivered", () => {
  it("reasoning sent as reasoning_content counts", async () => {
    const { events, g, usageNano } = await streamed({ model: R1, ...user("think [sim tokens=40 reasoning_content no_usage]") });
    const ds = deltas(events);
    expect(ds.filter((d) => d.reasoning_content).length).toBe(10);
    expect(g).toMatchObject({ status: 200, finish_reason: "stop", usage_source: "estimate", insured: false });
    expect(g.tokens_completion).toBe(completionEstimate(ds));
    expectWithinSimBound(g.tokens_completion, 40);
    expect(g.native_tokens_reasoning).toBeGreaterThanOrEqual(10);
    const endpoint = catalog.endpoints(R1)[0]!;
    expect(g.tokens_prompt).toBe(promptEstimate({ messages: user("think [sim tokens=40 reasoning_content no_usage]").messages }));
    expect(usageNano).toBe(uncachedCost(g.tokens_prompt, g.tokens_completion, endpoint));
    expect(nano(g.total_cost)).toBe(usageNano);
  });

  it("a streamed tool call counts its name and every argument fragment", async () => {
    const body = { model: LLAMA, tools: TOOLS, ...user("weather? [sim tokens=12 tool_call no_usage]") };
    const { events, g, usageNano } = await streamed(body);
    const ds = deltas(events);
    expect(ds.filter((d) => d.tool_calls).length).toBe(12);
    expect(g).toMatchObject({ status: 200, finish_reason: "tool_calls", usage_source: "estimate", insured: false });
    expect(g.tokens_completion).toBe(completionEstimate(ds));
    expectWithinSimBound(g.tokens_completion, 12);
    expect(g.tokens_prompt).toBe(promptEstimate(body));
    expect(usageNano).toBe(uncachedCost(g.tokens_prompt, g.tokens_completion, catalog.endpoints(LLAMA)[0]!));
  });

  it("the prompt estimate counts tools, tool_choice, response_format, tool results and earlier tool calls", async () => {
    const messages = [
      { role: "system", content: "Answer in JSON." },
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"query":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "c1", content: '{"temperature_c":4,"sky":"rain","wind_kmh":22}' },
      { role: "user", content: "And so? [sim tokens=5 no_usage]" },
    ];
    const body = {
      model: LLAMA,
      messages,
      tools: TOOLS,
      tool_choice: "auto",
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object", properties: { answer: { type: "string" } } } } },
    };
    const { g } = await streamed(body);
    expect(g.tokens_prompt).toBe(promptEstimate(body));
    // Not vacuous: the tools and the rest are a large share of it.
    expect(g.tokens_prompt).toBeGreaterThan(promptEstimate({ messages: messages.map((m) => ({ role: m.role, content: m.content })) }) + 40);
  });

  it("image parts count the model's per-image allowance, as the carrier counts them", async () => {
    const image = { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } };
    const body = (images: number, directive: string) => ({
      model: GEMMA,
      messages: [
        { role: "user", content: [{ type: "text", text: `What is in these? [sim tokens=4 ${directive}]` }, ...Array.from({ length: images }, () => image)] },
      ],
    });
    const one = await streamed(body(1, "no_usage"));
    const three = await streamed(body(3, "no_usage"));
    expect(three.g.tokens_prompt - one.g.tokens_prompt).toBe(2 * 256);
    expect(one.g.tokens_prompt).toBe(promptEstimate(body(1, "no_usage"), 256));
    // The carrier's own count of the same two requests differs by the same amount.
    const oneTrue = await streamed(body(1, "x"));
    const threeTrue = await streamed(body(3, "x"));
    expect(oneTrue.g.usage_source).toBe("carrier");
    expect(threeTrue.g.tokens_prompt - oneTrue.g.tokens_prompt).toBe(2 * 256);
  });

  it("a non-stream answer without usage counts a tool call and reasoning_content", async () => {
    const a = await newAccount(10);
    const call = (await (await chat(a.key, { model: LLAMA, tools: TOOLS, ...user("weather? [sim tokens=12 tool_call no_usage]") })).json()) as Json;
    expect(call.choices[0].message.tool_calls).toHaveLength(1);
    expectWithinSimBound(call.usage.completion_tokens, 12);
    const r = (await (await chat(a.key, { model: R1, ...user("think [sim tokens=40 reasoning_content no_usage]") })).json()) as Json;
    expect(r.choices[0].message.reasoning_content).toBeTruthy();
    expect(r.usage.completion_tokens).toBe(completionEstimate([r.choices[0].message]));
    expectWithinSimBound(r.usage.completion_tokens, 40);
    const t = await settled(a.accountId);
    const cost =
      uncachedCost(call.usage.prompt_tokens, call.usage.completion_tokens, catalog.endpoints(LLAMA)[0]!) +
      uncachedCost(r.usage.prompt_tokens, r.usage.completion_tokens, catalog.endpoints(R1)[0]!);
    expect(nano(t.total_usage)).toBe(cost);
    expect(await generation(a.key, r.id)).toMatchObject({ usage_source: "estimate", insured: false });
  });
});

describe("zero-completion insurance", () => {
  it("a stream with no output and no finish reason costs nothing; its tokens are still recorded", async () => {
    const { events, g, usageNano } = await streamed({ model: LLAMA, ...user("x [sim tokens=0 no_finish]") });
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.some((e) => e !== "[DONE]" && e.error)).toBe(false);
    expect((events.at(-2) as Json).usage.cost).toBe(0);
    expect(g).toMatchObject({ status: 200, tokens_completion: 0, finish_reason: null, total_cost: 0, usage_source: "carrier", insured: true });
    expect(g.tokens_prompt).toBeGreaterThan(0);
    expect(usageNano).toBe(0);
  });

  it("a non-stream answer with no completion tokens and no finish reason costs nothing", async () => {
    const a = await newAccount(10);
    const body = (await (await chat(a.key, { model: LLAMA, ...user("x [sim tokens=0 no_finish]") })).json()) as Json;
    expect(body.usage).toMatchObject({ completion_tokens: 0, cost: 0 });
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    const t = await settled(a.accountId);
    expect(t.total_usage).toBe(0);
    expect(await generation(a.key, body.id)).toMatchObject({ status: 200, total_cost: 0, usage_source: "carrier", insured: true });
  });

  it("an empty answer that did finish is charged for its prompt", async () => {
    const { g, usageNano } = await streamed({ model: LLAMA, ...user("x [sim tokens=0]") });
    expect(g).toMatchObject({ status: 200, tokens_completion: 0, finish_reason: "stop", insured: false });
    expect(usageNano).toBe(uncachedCost(g.tokens_prompt, 0, catalog.endpoints(LLAMA)[0]!));
    expect(usageNano).toBeGreaterThan(0);
  });

  it("a stream that ends in an error costs nothing, whatever was delivered; the estimate is recorded", async () => {
    const { events, g, usageNano } = await streamed({ model: R1, ...user("x [sim tokens=40 reasoning_content reset_after=20]") });
    expect((events.at(-2) as Json).error.code).toBe(502);
    expect(g).toMatchObject({ status: 502, finish_reason: "error", total_cost: 0, usage_source: "estimate", insured: true });
    expect(g.tokens_completion).toBe(completionEstimate(deltas(events)));
    expect(g.tokens_completion).toBeGreaterThanOrEqual(19);
    expect(usageNano).toBe(0);
  });
});

describe("a carrier that drops after the answer was delivered whole", () => {
  it("after its usage chunk: the stream ends cleanly, the cost shown is the cost charged, the record notes the late error", async () => {
    const { events, g, usageNano } = await streamed({ model: LLAMA, ...user("x [sim tokens=3 reset_after=6]") });
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.some((e) => e !== "[DONE]" && e.error)).toBe(false);
    const shown = events.filter((e): e is Json => e !== "[DONE]" && e.usage).at(-1)!.usage;
    expect(shown.completion_tokens).toBe(3);
    expect(shown.cost).toBeGreaterThan(0);
    expect(usageNano).toBe(nano(shown.cost));
    expect(g).toMatchObject({ status: 200, finish_reason: "stop", tokens_completion: 3, usage_source: "carrier", insured: false });
    expect(nano(g.total_cost)).toBe(usageNano);
    expect(g.error_message).toMatch(/after the answer was complete/);
  });

  it("after its finish chunk, before usage: the stream ends cleanly and the estimate of what was delivered is charged", async () => {
    const { events, g, usageNano } = await streamed({ model: LLAMA, ...user("x [sim tokens=3 reset_after=5]") });
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.some((e) => e !== "[DONE]" && e.error)).toBe(false);
    expect(g).toMatchObject({ status: 200, finish_reason: "stop", usage_source: "estimate", insured: false });
    expect(g.tokens_completion).toBe(completionEstimate(deltas(events)));
    expect(g.error_message).toMatch(/after the answer was complete/);
    expect(usageNano).toBe(uncachedCost(g.tokens_prompt, g.tokens_completion, catalog.endpoints(LLAMA)[0]!));
    expect(usageNano).toBeGreaterThan(0);
  });

  it("with n = 2, a drop after the first choice finished is still a failure: the second was not whole", async () => {
    // Events: choice 0 (role, 3 tokens, finish) = 5, choice 1 (role, 3 tokens, finish) = 5, usage, [DONE].
    const { events, g, usageNano } = await streamed({ model: LLAMA, n: 2, ...user("x [sim tokens=3 reset_after=7]") });
    expect((events.at(-2) as Json).error.code).toBe(502);
    expect(g).toMatchObject({ status: 502, total_cost: 0, insured: true });
    expect(usageNano).toBe(0);
    const whole = await streamed({ model: LLAMA, n: 2, ...user("x [sim tokens=3 reset_after=10]") });
    expect(whole.events.some((e) => e !== "[DONE]" && e.error)).toBe(false);
    expect(whole.g).toMatchObject({ status: 200, finish_reason: "stop", usage_source: "estimate", insured: false });
    expect(whole.usageNano).toBeGreaterThan(0);
  });

  it("before its finish chunk it is still a failure: an error chunk, nothing charged", async () => {
    const { events, g, usageNano } = await streamed({ model: LLAMA, ...user("x [sim tokens=3 reset_after=4]") });
    expect((events.at(-2) as Json).error.code).toBe(502);
    expect(g).toMatchObject({ status: 502, finish_reason: "error", total_cost: 0, insured: true });
    expect(usageNano).toBe(0);
  });
});

describe("a caller who leaves once every choice finished, before the carrier's usage chunk", () => {
  /** Streams until the finish chunk, then the caller's connection closes; the carrier's usage comes `usageDelayMs` after the finish. */
  async function leaveAfterFinish(vars: Record<string, string>, usageDelayMs: number, until: string) {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const caller = new AbortController();
    const { res, settled: done } = await chatWithVars(
      vars,
      a.key,
      { model: LLAMA, stream: true, ...user(`x [sim tokens=40 usage_delay_ms=${usageDelayMs} tag=${tag}]`) },
      {},
      caller.signal,
    );
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes('"finish_reason":"stop"')) text += new TextDecoder().decode((await reader.read()).value);
    caller.abort();
    const outcomes = (await simRequests(tag, { ms: 5000, until })).map((r) => r.outcome);
    await done();
    const t = await debited(a.accountId);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    return { outcomes, g, usageNano: nano(t.total_usage) };
  }

  it("the carrier is read on and its usage charged, not our estimate", async () => {
    const { outcomes, g, usageNano } = await leaveAfterFinish({}, 300, "completed");
    expect(outcomes).toEqual(["completed"]);
    expect(g).toMatchObject({ cancelled: true, status: 499, finish_reason: "stop", usage_source: "carrier", tokens_completion: 40, insured: false });
    expect(g.error_message).toMatch(/usage was read after it left/);
    expect(usageNano).toBe(uncachedCost(g.tokens_prompt, 40, catalog.endpoints(LLAMA)[0]!));
  });

  it("no usage within RELAY_USAGE_WAIT_MS: the carrier is cut off, the estimate charged, and the record says which", async () => {
    const { outcomes, g, usageNano } = await leaveAfterFinish({ RELAY_USAGE_WAIT_MS: "200" }, 20_000, "aborted");
    expect(outcomes).toEqual(["aborted"]);
    expect(g).toMatchObject({ cancelled: true, status: 499, usage_source: "estimate", insured: false });
    expect(g.error_message).toMatch(/did not come within RELAY_USAGE_WAIT_MS \(200 ms\)/);
    expect(g.tokens_completion).toBeGreaterThanOrEqual(40);
    expect(usageNano).toBe(uncachedCost(g.tokens_prompt, g.tokens_completion, catalog.endpoints(LLAMA)[0]!));
  });
});
