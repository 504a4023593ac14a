import { describe, it, expect } from "vitest";
import { chat, debited, get, newAccount, generation, uncachedCost, user, WEATHER_TOOLS } from "./helpers";
import { readSse } from "./sse";
import { simRequests, uniqueTag } from "./sim";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { costNano } from "../../src/catalog/money";

// First-party carriers in their own protocols, over HTTP through the simulator (which plays Anthropic's
// Messages API and Gemini's generateContent faithfully): what reaches the carrier, what the caller gets,
// and what is charged and recorded, exact to the nano-dollar — cache reads and writes included.
const catalog = Catalog.parse(catalogJson);
const CLAUDE = "anthropic/claude-haiku-4.5";
const GEMINI = "google/gemini-2.5-flash";
const GPT5 = "openai/gpt-5-mini";
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);
const endpointOf = (model: string) => catalog.endpoints(model)[0]!;

/** The cost the catalog's prices give the record's tokens (the record's own split of cached and written tokens). */
function recordCost(g: Json, model: string): number {
  return costNano(
    {
      promptTokens: g.tokens_prompt,
      completionTokens: g.tokens_completion,
      cachedTokens: g.native_tokens_cached,
      cacheWriteTokens: g.native_tokens_cache_write,
      cacheWrite1hTokens: 0,
    },
    endpointOf(model),
  );
}

async function answered(model: string, body: Json, headers: Record<string, string> = {}) {
  const a = await newAccount(10);
  const res = await chat(a.key, { model, ...body }, headers);
  const json = (await res.json()) as Json;
  return { a, res, json };
}

async function streamed(model: string, body: Json) {
  const a = await newAccount(10);
  const res = await chat(a.key, { model, ...body, stream: true });
  expect(res.status).toBe(200);
  const events = await readSse(res);
  return { a, res, events, chunks: events.filter((e): e is Json => e !== "[DONE]") };
}

describe.each([
  { model: CLAUDE, provider: "Anthropic", protocol: "anthropic-messages" },
  { model: GEMINI, provider: "Google AI Studio", protocol: "gemini" },
])("$provider ($protocol)", ({ model, provider, protocol }) => {
  it("a system prompt and a question: the carrier gets them in its protocol; the caller a chat completion, charged exactly", async () => {
    const tag = uniqueTag();
    const { a, res, json } = await answered(model, {
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: `hello [sim tokens=7 tag=${tag}]` },
      ],
    });
    expect(res.status).toBe(200);
    expect(json).toMatchObject({ object: "chat.completion", model, provider, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant" } }] });
    expect(json.usage.completion_tokens).toBe(7);
    const [sent] = await simRequests(tag);
    expect(sent!.protocol).toBe(protocol);
    if (protocol === "anthropic-messages") expect(sent!.body).toMatchObject({ system: [{ type: "text", text: "You are terse." }], max_tokens: 64000 });
    else expect(sent!.body).toMatchObject({ systemInstruction: { parts: [{ text: "You are terse." }] } });
    const t = await debited(a.accountId);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({ provider_name: provider, tokens_completion: 7, usage_source: "carrier", native_tokens_cached: 0 });
    expect(g.tokens_prompt).toBe(json.usage.prompt_tokens);
    expect(nano(t.total_usage)).toBe(recordCost(g, model));
    expect(nano(json.usage.cost)).toBe(nano(t.total_usage));
  });

  it("multi-turn tool use: a text beside the tool result is kept, after it; the answer's tool calls come back as tool_calls", async () => {
    const tag = uniqueTag();
    const { res, json } = await answered(model, {
      tools: WEATHER_TOOLS,
      messages: [
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"temp":18}' },
        { role: "user", content: `And tomorrow? [sim tool_call tokens=6 tag=${tag}]` },
      ],
    });
    expect(res.status).toBe(200);
    expect(json.choices[0].finish_reason).toBe("tool_calls");
    expect(json.choices[0].message.tool_calls[0]).toMatchObject({ type: "function", function: { name: "get_weather" } });
    const [sent] = await simRequests(tag);
    const turns = protocol === "anthropic-messages" ? sent!.body.messages : sent!.body.contents;
    expect(turns).toHaveLength(3);
    const last = protocol === "anthropic-messages" ? turns[2].content : turns[2].parts;
    if (protocol === "anthropic-messages") {
      expect(last[0]).toEqual({ type: "tool_result", tool_use_id: "call_1", content: '{"temp":18}' });
      expect(last[1]).toMatchObject({ type: "text", text: expect.stringContaining("And tomorrow?") });
    } else {
      expect(last[0]).toEqual({ functionResponse: { name: "get_weather", response: { temp: 18 } } });
      expect(last[1]).toMatchObject({ text: expect.stringContaining("And tomorrow?") });
    }
  });

  it("parallel tool calls and their results go back as one turn of calls and one of results, in order", async () => {
    const tag = uniqueTag();
    const call = (id: string, city: string) => ({ id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city }) } });
    const { res } = await answered(model, {
      tools: WEATHER_TOOLS,
      messages: [
        { role: "user", content: "Paris and Rome?" },
        { role: "assistant", content: null, tool_calls: [call("call_p", "Paris"), call("call_r", "Rome")] },
        { role: "tool", tool_call_id: "call_p", content: '{"temp":18}' },
        { role: "tool", tool_call_id: "call_r", content: '{"temp":24}' },
        { role: "user", content: `Compare [sim tokens=4 tag=${tag}]` },
      ],
    });
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    if (protocol === "anthropic-messages") {
      const [, assistant, results] = sent!.body.messages;
      expect(assistant.content.map((b: Json) => [b.type, b.id, b.input?.city])).toEqual([
        ["tool_use", "call_p", "Paris"],
        ["tool_use", "call_r", "Rome"],
      ]);
      expect(results.content.map((b: Json) => b.tool_use_id ?? b.type)).toEqual(["call_p", "call_r", "text"]);
    } else {
      const [, modelTurn, results] = sent!.body.contents;
      expect(modelTurn.parts.map((p: Json) => p.functionCall.args.city)).toEqual(["Paris", "Rome"]);
      expect(results.parts.map((p: Json) => p.functionResponse?.response.temp ?? "text")).toEqual([18, 24, "text"]);
    }
  });

  it("an image part reaches the carrier as its own image block", async () => {
    const tag = uniqueTag();
    const { res } = await answered(model, {
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "text", text: `what is it? [sim tokens=3 tag=${tag}]` },
          ],
        },
      ],
    });
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    if (protocol === "anthropic-messages")
      expect(sent!.body.messages[0].content[0]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } });
    else expect(sent!.body.contents[0].parts[0]).toEqual({ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } });
  });

  it("streamed: one id on every chunk, content, a finish chunk, usage and cost in the last chunk, [DONE]; charged exactly", async () => {
    const { a, res, events, chunks } = await streamed(model, user("stream it [sim tokens=12]"));
    expect(events.at(-1)).toBe("[DONE]");
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]!.id).toBe(res.headers.get("x-generation-id"));
    const text = chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
    expect(text.length).toBeGreaterThan(0);
    expect(chunks.some((c) => c.choices?.[0]?.finish_reason === "stop")).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.usage.completion_tokens).toBe(12);
    const t = await debited(a.accountId);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(nano(last.usage.cost)).toBe(nano(t.total_usage));
    expect(nano(t.total_usage)).toBe(recordCost(g, model));
  });

  it.each([
    { stream: false, name: "answered" },
    { stream: true, name: "streamed" },
  ])("cache reads (and Anthropic's writes) are billed at their prices, the prompt counted once ($name)", async ({ stream }) => {
    const write = protocol === "anthropic-messages" ? 40 : 0;
    const prompt = `${"long shared context ".repeat(200)} [sim tokens=5 cache_read=300 cache_write=${write}]`;
    const a = await newAccount(10);
    const res = await chat(a.key, { model, stream, messages: [{ role: "user", content: prompt }] });
    expect(res.status).toBe(200);
    let usage: Json;
    if (stream) {
      const events = await readSse(res);
      usage = (events.filter((e): e is Json => e !== "[DONE]").at(-1) as Json).usage;
    } else usage = ((await res.json()) as Json).usage;
    expect(usage.prompt_tokens_details.cached_tokens).toBe(300);
    if (write) expect(usage.prompt_tokens_details.cache_write_tokens).toBe(write);
    else expect(usage.prompt_tokens_details).not.toHaveProperty("cache_write_tokens");
    const plain = (await (
      await chat(a.key, { model, messages: [{ role: "user", content: prompt.replace(/cache_read=\d+ cache_write=\d+/, "cache_read=0 cache_write=0") }] })
    ).json()) as Json;
    expect(usage.prompt_tokens).toBe(plain.usage.prompt_tokens);
    const e = endpointOf(model);
    const want = (usage.prompt_tokens - 300 - write) * e.inputNano + 300 * e.cacheReadNano + write * e.cacheWriteNano + 5 * e.outputNano;
    expect(nano(usage.cost)).toBe(want);
    const t = await debited(a.accountId, 2);
    expect(nano(t.total_usage)).toBe(want + nano(plain.usage.cost));
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({ native_tokens_cached: 300, native_tokens_cache_write: write });
    expect(nano(g.cache_discount)).toBe(usage.prompt_tokens * e.inputNano - (want - 5 * e.outputNano));
  });

  it.each([
    { status: 400, want: 400 },
    { status: 401, want: 502 },
    { status: 429, want: 429 },
    { status: 500, want: 502 },
    { status: protocol === "anthropic-messages" ? 529 : 503, want: 503 },
  ])("a carrier error $status (its only carrier) → $want, nothing charged", async ({ status, want }) => {
    const { a, res, json } = await answered(model, user(`x [sim status=${status}]`));
    expect(res.status).toBe(want);
    expect(json.error.code).toBe(want);
    await debited(a.accountId);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({ status: want, total_cost: 0 });
  });

  it("a stream whose carrier reports no usage ends cleanly and is charged our estimate of what it delivered", async () => {
    const { a, res, events } = await streamed(model, user("no usage [sim tokens=12 no_usage]"));
    expect(events.at(-1)).toBe("[DONE]");
    await debited(a.accountId);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({ status: 200, finish_reason: "stop", usage_source: "estimate", insured: false });
    expect(g.tokens_completion).toBeGreaterThanOrEqual(12);
    expect(nano(g.total_cost)).toBe(uncachedCost(g.tokens_prompt, g.tokens_completion, endpointOf(model)));
  });

  it("a stream the carrier cuts mid-way fails for the caller and is charged the estimate of what was delivered", async () => {
    const { a, res, chunks } = await streamed(model, user("long [sim tokens=40 reset_after=5]"));
    expect(chunks.at(-1)).toMatchObject({ error: { code: 502 }, choices: [{ finish_reason: "error" }] });
    await debited(a.accountId);
    const g = (await generation(a.key, res.headers.get("x-generation-id")!)) as Json;
    expect(g).toMatchObject({ status: 502, usage_source: "estimate", insured: true, total_cost: 0 });
  });
});

describe("Anthropic: signed thinking", () => {
  it("reasoning comes back with its signature, and goes back to the carrier byte for byte in the next turn", async () => {
    const { res, json } = await answered(CLAUDE, { max_tokens: 4000, reasoning: { effort: "low" }, ...user("think first [sim tokens=8 reasoning_content]") });
    expect(res.status).toBe(200);
    const message = json.choices[0].message;
    expect(message.reasoning.length).toBeGreaterThan(0);
    const signed = message.reasoning_details.find((d: Json) => d.signature);
    expect(signed).toMatchObject({ type: "reasoning.text", format: "anthropic-claude-v1" });
    expect(json.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);

    const tag = uniqueTag();
    const next = await answered(CLAUDE, {
      max_tokens: 4000,
      reasoning: { effort: "low" },
      messages: [
        { role: "user", content: "think first" },
        { role: "assistant", content: message.content, reasoning_details: message.reasoning_details },
        { role: "user", content: `and then? [sim tokens=3 tag=${tag}]` },
      ],
    });
    expect(next.res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(sent!.body.messages[1].content[0]).toEqual({ type: "thinking", thinking: signed.text, signature: signed.signature });
  });

  it("parameters Anthropic has no place for are left out and named in the routing metadata; require_parameters keeps the carrier out", async () => {
    const tag = uniqueTag();
    const { res, json } = await answered(
      CLAUDE,
      { frequency_penalty: 0.5, seed: 3, n: 1, ...user(`x [sim tokens=2 tag=${tag}]`) },
      { "x-openrouter-metadata": "enabled" },
    );
    expect(res.status).toBe(200);
    expect(json.openrouter_metadata.params).toEqual({ dropped_parameters: ["frequency_penalty", "seed"] });
    const [sent] = await simRequests(tag);
    expect(sent!.body).not.toHaveProperty("frequency_penalty");
    const strict = await answered(CLAUDE, { frequency_penalty: 0.5, provider: { require_parameters: true }, ...user("x") });
    expect(strict.res.status).toBe(404);
    expect(strict.json.error.message).toMatch(/frequency_penalty/);
  });

  it("what Anthropic cannot take is refused with a 400 naming it, nothing charged", async () => {
    const { res, json } = await answered(CLAUDE, { response_format: { type: "json_object" }, ...user("json please") });
    expect(res.status).toBe(400);
    expect(json.error.message).toMatch(/response_format json_object/);
  });
});

describe("Anthropic: structured outputs", () => {
  it("json_schema goes as output_format with the beta flag to a model that takes it (Sonnet 4.5); another refuses it clearly", async () => {
    const tag = uniqueTag();
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    const response_format = { type: "json_schema", json_schema: { name: "a", schema } };
    const { res } = await answered("anthropic/claude-sonnet-4.5", { response_format, ...user(`json [sim tokens=4 tag=${tag}]`) });
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.output_format).toEqual({ type: "json_schema", schema });
    expect(sent!.headers.anthropic_beta).toBe("structured-outputs-2025-11-13");
    const haiku = await answered(CLAUDE, { response_format, ...user("json") });
    expect(haiku.res.status).toBe(400);
    expect(haiku.json.error.message).toMatch(/does not take structured outputs/);
  });
});

describe("Gemini: structured output", () => {
  it("response_format json_schema goes as responseMimeType and responseJsonSchema", async () => {
    const tag = uniqueTag();
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const { res } = await answered(GEMINI, {
      response_format: { type: "json_schema", json_schema: { name: "a", schema } },
      ...user(`json [sim tokens=4 tag=${tag}]`),
    });
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.generationConfig).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: schema });
  });
});

describe("OpenAI (first-party): reasoning-model rules and implicit cache reads", () => {
  it("max_tokens goes as max_completion_tokens and the effort as reasoning_effort; cached reads billed at the read price", async () => {
    const tag = uniqueTag();
    const { a, res, json } = await answered(GPT5, {
      max_tokens: 300,
      reasoning: { effort: "low" },
      ...user(`${"a long shared prefix ".repeat(40)} [sim tokens=4 cache_read=64 tag=${tag}]`),
    });
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body).toMatchObject({ model: "gpt-5-mini", max_completion_tokens: 300, reasoning_effort: "low" });
    expect(sent!.body).not.toHaveProperty("max_tokens");
    expect(sent!.body).not.toHaveProperty("reasoning");
    expect(json.usage.prompt_tokens_details.cached_tokens).toBe(64);
    const e = endpointOf(GPT5);
    const want = (json.usage.prompt_tokens - 64) * e.inputNano + 64 * e.cacheReadNano + 4 * e.outputNano;
    expect(nano(json.usage.cost)).toBe(want);
    expect(nano((await debited(a.accountId)).total_usage)).toBe(want);
  });
});

describe("embeddings models in the catalog", () => {
  it("are refused on chat with a 400 that names /embeddings; /models lists them only when asked", async () => {
    const { res, json } = await answered("openai/text-embedding-3-small", user("embed me"));
    expect(res.status).toBe(400);
    expect(json.error.message).toMatch(/is an embeddings model: it answers POST \/api\/v1\/embeddings/);
    const ids = async (path: string) => (((await (await get(path)).json()) as Json).data as Json[]).map((m) => m.id);
    expect(await ids("/models?output_modalities=embeddings")).toEqual(expect.arrayContaining(["openai/text-embedding-3-small", "google/gemini-embedding-001"]));
    expect(await ids("/models")).not.toContain("openai/text-embedding-3-small");
  });
});
