import { describe, it, expect } from "vitest";
import { chat, newAccount, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";

// The standard parameters are type-checked against the contract before anything is held or sent: a
// wrong value is the caller's 400 naming the field, never a carrier's refusal answered as a 5xx.
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
type Json = Record<string, any>;
const fn = (name: unknown) => ({ type: "function", function: { name, parameters: { type: "object" } } });

describe("standard parameters of the wrong type or out of range", () => {
  it.each([
    ["temperature", { temperature: "hot" }, /`temperature`/],
    ["temperature above 2", { temperature: 2.5 }, /`temperature`: must be at most 2/],
    ["temperature below 0", { temperature: -0.1 }, /`temperature`: must be at least 0/],
    ["top_p above 1", { top_p: 1.5 }, /`top_p`: must be at most 1/],
    ["top_k not an integer", { top_k: 1.5 }, /`top_k`/],
    ["min_p a string", { min_p: "0.1" }, /`min_p`/],
    ["top_a a string", { top_a: "x" }, /`top_a`/],
    ["frequency_penalty out of range", { frequency_penalty: 3 }, /`frequency_penalty`: must be at most 2/],
    ["presence_penalty out of range", { presence_penalty: -2.5 }, /`presence_penalty`: must be at least -2/],
    ["repetition_penalty a boolean", { repetition_penalty: true }, /`repetition_penalty`/],
    ["seed not an integer", { seed: 1.2 }, /`seed`/],
    ["logit_bias values", { logit_bias: { "50256": "ban" } }, /`logit_bias.50256`/],
    ["logprobs", { logprobs: "yes" }, /`logprobs`/],
    ["top_logprobs above 20", { top_logprobs: 21 }, /`top_logprobs`: must be at most 20/],
    ["stop: five sequences", { stop: ["a", "b", "c", "d", "e"] }, /`stop`/],
    ["stop: a number", { stop: 7 }, /`stop`/],
    ["stream_options", { stream_options: "on" }, /`stream_options`/],
    ["response_format type", { response_format: { type: "yaml" } }, /`response_format/],
    ["response_format json_schema without its schema object", { response_format: { type: "json_schema" } }, /`response_format.json_schema`/],
    ["tools not an array", { tools: { name: "f" } }, /`tools`/],
    ["a function tool without a name", { tools: [{ type: "function", function: { description: "x" } }] }, /`tools.0.function.name`/],
    ["a function name over 64 characters", { tools: [fn("f".repeat(65))] }, /`tools.0.function.name`: at most 64/],
    ["tool_choice an unknown word", { tool_choice: "sometimes" }, /`tool_choice`/],
    ["parallel_tool_calls", { parallel_tool_calls: "yes" }, /`parallel_tool_calls`/],
    ["reasoning.effort", { reasoning: { effort: "extreme" } }, /`reasoning.effort`/],
    ["reasoning.max_tokens", { reasoning: { max_tokens: "many" } }, /`reasoning.max_tokens`/],
    ["reasoning_effort", { reasoning_effort: "extreme" }, /`reasoning_effort`/],
    ["modalities", { modalities: ["smell"] }, /`modalities.0`/],
    ["metadata values must be strings", { metadata: { a: 1 } }, /`metadata.a`/],
    ["metadata: 17 pairs", { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, /at most 16 metadata pairs/],
    ["service_tier", { service_tier: "gold" }, /`service_tier`/],
    ["n zero", { n: 0 }, /`n`: must be at least 1/],
    ["n not an integer", { n: 1.5 }, /`n`/],
    ["best_of", { best_of: "2" }, /`best_of`/],
  ])("%s: 400 naming it, no carrier called", async (_name, fields, message) => {
    const a = await newAccount(1);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, ...user(`x [sim tag=${tag}]`), ...fields });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe(400);
    expect(body.error.message).toMatch(message);
    expect(await simRequests(tag)).toEqual([]);
  });
});

describe("what real clients send is accepted and forwarded as sent", () => {
  it("nulls where the contract allows them, and the shapes of the openai SDK", async () => {
    const a = await newAccount(1);
    const tag = uniqueTag();
    const fields = {
      temperature: null,
      top_p: 0.9,
      top_k: 40,
      min_p: 0.05,
      top_a: 0,
      frequency_penalty: -1.5,
      presence_penalty: 2,
      repetition_penalty: 1.1,
      seed: 7,
      logit_bias: { "50256": -100 },
      logprobs: true,
      top_logprobs: 20,
      stop: null,
      stream_options: null,
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
      tools: [
        { type: "function", function: { name: "get_weather", description: "d", parameters: { type: "object" }, strict: true } },
        { type: "openrouter:web_search", parameters: {} },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      reasoning: { effort: "low", summary: "auto", max_tokens: 100, exclude: false, enabled: true, extra_key: 1 },
      reasoning_effort: null,
      modalities: ["text"],
      metadata: { session: "abc" },
      prompt_cache_key: "k",
      service_tier: "auto",
      prediction: { type: "content", content: "x" },
      n: 1,
      best_of: null,
      vendor_extension: { anything: true },
    };
    const res = await chat(a.key, { model: LLAMA, ...user(`x [sim tokens=2 tag=${tag}]`), ...fields });
    expect(res.status, await res.clone().text()).toBe(200);
    const sent = (await simRequests(tag))[0]!.body;
    for (const [k, v] of Object.entries(fields)) expect(sent[k], k).toEqual(v);
  });

  it.each([
    ["a string stop", { stop: "\n" }],
    ["tool_choice words", { tool_choice: "required", tools: [fn("f")] }],
    ["json_object", { response_format: { type: "json_object" } }],
    ["text", { response_format: { type: "text" } }],
    ["stream_options with include_usage", { stream_options: { include_usage: false } }],
  ])("%s", async (_name, fields) => {
    const a = await newAccount(1);
    expect((await chat(a.key, { model: LLAMA, ...user("x [sim tokens=1]"), ...fields })).status).toBe(200);
  });
});
