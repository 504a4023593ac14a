import { describe, it, expect } from "vitest";
import { call, chat, debited, generation, newAccount } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

// OpenAI's GPT-6.1 Sol takes function tools with reasoning only on the Responses API (on Chat Completions
// the simulated carrier refuses them, as OpenAI does): its endpoint speaks `openai-responses`. Through each
// inbound API, a tool turn with reasoning reaches the carrier as a stateless Responses request, comes back
// in the caller's protocol, and is billed exactly (cached reads at the read price) and recorded.
const catalog = Catalog.parse(catalogJson);
const SOL = "openai/gpt-6.1-sol";
const sol = catalog.endpoints(SOL)[0]!;
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);
const WEATHER = {
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function post(path: string, key: string, body: unknown) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** What the catalog's prices give these tokens: cached reads at the read price, the rest at the input price. */
function cost(prompt: number, cached: number, completion: number): number {
  return (prompt - cached) * sol.inputNano + cached * sol.cacheReadNano + completion * sol.outputNano;
}

describe("OpenAI GPT-6.1 Sol on the Responses API (carrier protocol openai-responses)", () => {
  it("chat with tools and reasoning: a stateless Responses request; tool calls and sealed reasoning back; the next turn sends them back; billed exactly", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await chat(a.key, {
      model: SOL,
      max_tokens: 300,
      reasoning: { effort: "high" },
      tools: [{ type: "function", function: WEATHER }],
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: `${"a long shared prefix ".repeat(40)} Weather in Paris? [sim tool_call cache_read=128 tag=${tag}]` },
      ],
    });
    const json = (await res.json()) as Json;
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent).toMatchObject({ protocol: "openai-responses", path: "/openai/v1/responses" });
    expect(sent!.body).toMatchObject({
      model: "gpt-6.1-sol",
      instructions: "Be brief.",
      store: false,
      include: ["reasoning.encrypted_content"],
      max_output_tokens: 300,
      reasoning: { effort: "high", summary: "auto" },
      tools: [{ type: "function", name: "get_weather", strict: false, parameters: WEATHER.parameters }],
    });
    expect(sent!.body.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: expect.stringContaining("Weather in Paris?") }] },
    ]);
    const message = json.choices[0].message;
    expect(json.choices[0].finish_reason).toBe("tool_calls");
    expect(message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_weather", arguments: expect.any(String) } },
    ]);
    expect(message.reasoning_details).toContainEqual(expect.objectContaining({ type: "reasoning.encrypted", format: "openai-responses-v1" }));
    const u = json.usage;
    expect(u.prompt_tokens_details.cached_tokens).toBe(128);
    expect(u.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const want = cost(u.prompt_tokens, 128, u.completion_tokens);
    expect(nano(u.cost)).toBe(want);
    expect(nano((await debited(a.accountId)).total_usage)).toBe(want);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({ provider_name: "OpenAI", usage_source: "carrier", native_tokens_cached: 128, tokens_completion: u.completion_tokens });
    expect(nano(g.total_cost)).toBe(want);

    // The next turn: the sealed reasoning goes back byte for byte (the carrier checks it), then the call and its result.
    const tag2 = uniqueTag();
    const next = await chat(a.key, {
      model: SOL,
      reasoning: { effort: "high" },
      tools: [{ type: "function", function: WEATHER }],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        message,
        { role: "tool", tool_call_id: message.tool_calls[0].id, content: "18C, sunny" },
        { role: "user", content: `Thanks [sim tokens=3 tag=${tag2}]` },
      ],
    });
    expect(next.status).toBe(200);
    const [again] = await simRequests(tag2);
    const sealed = message.reasoning_details.find((d: Json) => d.type === "reasoning.encrypted").data;
    expect(again!.body.input.slice(1, 4)).toEqual([
      { type: "reasoning", summary: expect.any(Array), encrypted_content: sealed },
      { type: "function_call", call_id: message.tool_calls[0].id, name: "get_weather", arguments: message.tool_calls[0].function.arguments },
      { type: "function_call_output", call_id: message.tool_calls[0].id, output: "18C, sunny" },
    ]);
  });

  it("/responses as Codex calls it (tools, reasoning, a prompt cache key, streamed): the function call streams back; billed exactly and recorded", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await post("/responses", a.key, {
      model: "gpt-6.1-sol",
      instructions: "You are a coding agent.",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: `List the files [sim tool_call tag=${tag}]` }] }],
      tools: [
        {
          type: "function",
          name: "shell",
          description: "Runs a command",
          parameters: { type: "object", properties: { cmd: { type: "string" } } },
          strict: false,
        },
      ],
      tool_choice: "auto",
      parallel_tool_calls: false,
      reasoning: { effort: "medium", summary: "auto" },
      store: false,
      stream: true,
      prompt_cache_key: "codex-session-1",
    });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split("\n\n")
      .map((frame) => frame.split("\n").find((line) => line.startsWith("data: ")))
      .filter((data): data is string => data !== undefined)
      .map((data) => JSON.parse(data.slice(6)) as Json);
    const [sent] = await simRequests(tag);
    expect(sent).toMatchObject({ protocol: "openai-responses", path: "/openai/v1/responses" });
    expect(sent!.body).toMatchObject({
      stream: true,
      prompt_cache_key: "codex-session-1",
      tool_choice: "auto",
      parallel_tool_calls: false,
      tools: [{ name: "shell" }],
    });
    const completed = events.find((e) => e.type === "response.completed")!;
    expect(completed.response.output).toContainEqual(expect.objectContaining({ type: "function_call", name: "shell" }));
    const args = events.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta as string);
    expect(args.length).toBeGreaterThan(0);
    const u = completed.response.usage;
    expect(u.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const want = cost(u.input_tokens, u.input_tokens_details.cached_tokens, u.output_tokens);
    expect(nano((await debited(a.accountId)).total_usage)).toBe(want);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({
      provider_name: "OpenAI",
      inbound_api: "responses",
      usage_source: "carrier",
      tokens_prompt: u.input_tokens,
      tokens_completion: u.output_tokens,
    });
  });

  it("a Codex tool loop on /responses: OpenAI's sealed reasoning, inside our envelope, reaches OpenAI byte for byte with the call and its output", async () => {
    const a = await newAccount(10);
    const tools = [{ type: "function", name: "shell", parameters: { type: "object", properties: { cmd: { type: "string" } } }, strict: false }];
    const ask = { model: "gpt-6.1-sol", tools, reasoning: { effort: "medium", summary: "auto" }, include: ["reasoning.encrypted_content"], store: false };
    const tag = uniqueTag();
    const first = await post("/responses", a.key, { ...ask, input: [{ role: "user", content: `Run ls [sim tool_call tag=${tag}]` }] });
    expect(first.status).toBe(200);
    const output = ((await first.json()) as Json).output as Json[];
    const call = output.find((i) => i.type === "function_call")!;
    expect(output.find((i) => i.type === "reasoning")!.encrypted_content).toMatch(/^swy2\./); // ours, sealed: OpenAI's own inside
    const [sent] = await simRequests(tag);
    const tag2 = uniqueTag();
    const next = await post("/responses", a.key, {
      ...ask,
      input: [
        { role: "user", content: "Run ls" },
        ...output,
        { type: "function_call_output", call_id: call.call_id, output: "a.txt" },
        { role: "user", content: `Go on [sim tokens=3 tag=${tag2}]` },
      ],
    });
    expect(next.status).toBe(200);
    const [again] = await simRequests(tag2);
    expect(sent!.body.input).toHaveLength(1);
    expect(again!.body.input.slice(1, 4)).toEqual([
      { type: "reasoning", summary: expect.any(Array), encrypted_content: expect.any(String) },
      { type: "function_call", call_id: call.call_id, name: "shell", arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: "a.txt" },
    ]);
    // The simulated OpenAI refuses sealed reasoning that changed (400): the 200 above is its byte-for-byte check.
    expect(again!.body.input[1].encrypted_content).not.toMatch(/^swy2\./);
  });

  it("/messages with a tool: tool_use back through the Responses wire, billed exactly", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await post("/messages", a.key, {
      model: SOL,
      max_tokens: 500,
      tools: [{ name: "get_weather", description: "Current weather", input_schema: WEATHER.parameters }],
      messages: [{ role: "user", content: `Weather in Rome? [sim tool_call tag=${tag}]` }],
    });
    const json = (await res.json()) as Json;
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.protocol).toBe("openai-responses");
    expect(json.stop_reason).toBe("tool_use");
    expect(json.content).toContainEqual(expect.objectContaining({ type: "tool_use", name: "get_weather" }));
    const t = await debited(a.accountId);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({ provider_name: "OpenAI", inbound_api: "messages", usage_source: "carrier" });
    expect(nano(t.total_usage)).toBe(cost(g.tokens_prompt, g.native_tokens_cached, g.tokens_completion));
    expect(nano(g.total_cost)).toBe(nano(t.total_usage));
  });
});
