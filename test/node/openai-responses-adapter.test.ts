import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import { Untranslatable } from "../../src/request/errors";
import { readUsage } from "../../src/request/usage";
import { openAiResponses } from "../../src/protocols/outbound/openai-responses";
import { carrierProtocol } from "../../src/protocols/outbound";
import { carrierHeaders } from "../../src/carriers/carrier-headers";

// The OpenAI Responses carrier adapter, both directions, from wire shapes of OpenAI's Responses API
// (request body, response object, typed stream events).
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("openai/gpt-6.1-sol")[0]!;
type Json = Record<string, any>;
const body = (json: Json) => chatRequestSchema.parse({ model: "openai/gpt-6.1-sol", ...json });
const wire = (json: Json, stream = false) => JSON.parse(openAiResponses.bodies(body(json), stream, "hash")(endpoint)) as Json;
const ask = body({ messages: [{ role: "user", content: "x" }] });
const WEATHER = { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } };
const F = "openai-responses-v1";

describe("OpenAI Responses carrier: the request", () => {
  it("is the protocol of GPT-6.1 Sol's endpoint (the openai carrier's key and base URL), POST {base}/responses with a Bearer key", () => {
    expect(endpoint.provider).toBe("openai");
    expect(carrierProtocol(endpoint)).toBe(openAiResponses);
    expect(carrierProtocol(catalog.endpoints("openai/gpt-5-mini")[0]!).name).toBe("openai-chat");
    expect(openAiResponses.url("https://api.openai.com/v1/", endpoint, true)).toBe("https://api.openai.com/v1/responses");
    expect(carrierHeaders(endpoint, "sk")).toMatchObject({ authorization: "Bearer sk", "content-type": "application/json" });
  });

  it.each([
    {
      name: "system → instructions; a user message → input_text; the cap → max_output_tokens; stateless; the user's hash → safety_identifier",
      req: {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ],
        max_tokens: 50,
        temperature: 0.3,
        top_p: 0.9,
        user: "ada",
      },
      want: {
        model: "gpt-6.1-sol",
        instructions: "Be brief.",
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
        store: false,
        include: ["reasoning.encrypted_content"],
        max_output_tokens: 50,
        temperature: 0.3,
        top_p: 0.9,
        safety_identifier: "hash",
      },
    },
    {
      name: "a tool loop: reasoning items (OpenAI's only, sealed content and summary), the text, function_call, function_call_output; a developer message stays one",
      req: {
        messages: [
          { role: "developer", content: "Use tools." },
          { role: "user", content: "Weather?" },
          {
            role: "assistant",
            content: "Checking.",
            reasoning_details: [
              { type: "reasoning.summary", summary: "Need weather", id: "rs_1", format: F, index: 0 },
              { type: "reasoning.encrypted", data: "gAAAA-sealed", id: "rs_1", format: F, index: 1 },
              { type: "reasoning.text", text: "claude thought", signature: "sig", format: "anthropic-claude-v1", index: 2 },
            ],
            tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
          },
          { role: "tool", tool_call_id: "call_1", content: "18C" },
        ],
        tools: [{ type: "function", function: { ...WEATHER, strict: true } }],
        tool_choice: { type: "function", function: { name: "get_weather" } },
        parallel_tool_calls: false,
      },
      want: {
        input: [
          { type: "message", role: "developer", content: [{ type: "input_text", text: "Use tools." }] },
          { type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] },
          { type: "reasoning", summary: [{ type: "summary_text", text: "Need weather" }], encrypted_content: "gAAAA-sealed" },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
          { type: "function_call_output", call_id: "call_1", output: "18C" },
        ],
        tools: [{ type: "function", name: "get_weather", description: "Weather", parameters: WEATHER.parameters, strict: true }],
        tool_choice: { type: "function", name: "get_weather" },
        parallel_tool_calls: false,
      },
    },
    {
      name: "a chat tool without strict stays non-strict (the Responses default would be strict)",
      req: { messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: WEATHER }], tool_choice: "required" },
      want: {
        tools: [{ type: "function", name: "get_weather", description: "Weather", parameters: WEATHER.parameters, strict: false }],
        tool_choice: "required",
      },
    },
    {
      name: "reasoning: the effort and summary auto; exclude asks no summary; off → effort none",
      req: { messages: [{ role: "user", content: "x" }], reasoning: { effort: "high" } },
      want: { reasoning: { effort: "high", summary: "auto" } },
    },
    {
      name: "reasoning.exclude: the effort alone",
      req: { messages: [{ role: "user", content: "x" }], reasoning: { effort: "low", exclude: true } },
      want: { reasoning: { effort: "low" } },
    },
    {
      name: "reasoning off on a model that always thinks (GPT-6.1 Sol): its lowest effort, low",
      req: { messages: [{ role: "user", content: "x" }], reasoning_effort: "none" },
      want: { reasoning: { effort: "low", summary: "auto" } },
    },
    {
      name: "minimal on a model that always thinks: low",
      req: { messages: [{ role: "user", content: "x" }], reasoning: { effort: "minimal" } },
      want: { reasoning: { effort: "low", summary: "auto" } },
    },
    {
      name: "response_format json_schema → text.format; the session → prompt_cache_key; image and file parts",
      req: {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Describe" },
              { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
              { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBE" } },
            ],
          },
        ],
        response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true } },
        session_id: "sess-7",
      },
      want: {
        input: [
          {
            type: "message",
            role: "user",
            content: [
              { type: "input_text", text: "Describe" },
              { type: "input_image", image_url: "https://example.com/a.png", detail: "low" },
              { type: "input_file", file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" },
            ],
          },
        ],
        text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
        prompt_cache_key: "sess-7",
      },
    },
  ])("$name", ({ req, want }) => {
    expect(wire(req)).toMatchObject(want);
  });

  it("streams with stream: true; the caller's prompt_cache_key wins over the session", () => {
    expect(wire({ messages: [{ role: "user", content: "x" }], prompt_cache_key: "k", session_id: "s" }, true)).toMatchObject({
      stream: true,
      prompt_cache_key: "k",
    });
    expect(wire({ messages: [{ role: "user", content: "x" }] })).not.toHaveProperty("stream");
  });

  it("fields the Responses API has no place for are left out and named; none of them travels", () => {
    const req = { messages: [{ role: "user", content: "x" }], stop: ["END"], seed: 3, frequency_penalty: 0.5, n: 2, logit_bias: { "1": 2 } };
    expect(openAiResponses.leftOut(body(req), endpoint).sort()).toEqual(["frequency_penalty", "logit_bias", "n", "seed", "stop"]);
    const sent = wire(req);
    for (const f of ["stop", "seed", "frequency_penalty", "n", "logit_bias", "messages", "max_tokens"]) expect(sent).not.toHaveProperty(f);
  });

  it.each([
    [{ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x", format: "wav" } }] }] }, /input_audio/],
    [{ messages: [{ role: "function", content: "x" }] }, /no equivalent/],
    [{ messages: [{ role: "user", content: "x" }], tools: [{ type: "web_search" }] }, /only function tools/],
    [{ messages: [{ role: "user", content: "x" }], response_format: { type: "grammar", grammar: "x" } }, /no equivalent/],
  ])("refuses what it cannot express (%#)", (req, message) => {
    expect(() => wire(req)).toThrow(Untranslatable);
    expect(() => wire(req)).toThrow(message);
  });
});

describe("OpenAI Responses carrier: the answer", () => {
  const read = (json: unknown, req = ask) => {
    const r = openAiResponses.answer(json, req);
    if (!("answer" in r)) throw new Error(r.unusable);
    return r.answer as Json;
  };
  const response = (output: Json[], extra: Json = {}) => ({
    id: "resp_1",
    object: "response",
    created_at: 1790000000,
    status: "completed",
    model: "gpt-6.1-sol-2026-09-29",
    output,
    usage: {
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 600 },
      output_tokens: 50,
      output_tokens_details: { reasoning_tokens: 30 },
      total_tokens: 1050,
    },
    ...extra,
  });
  const REASONING = { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "Thinking." }], encrypted_content: "gAAAA-sealed" };

  it("reasoning, text and usage: cached tokens inside the input, reasoning tokens inside the output", () => {
    const a = read(
      response([
        REASONING,
        { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello", annotations: [] }] },
      ]),
    );
    expect(a).toMatchObject({ id: "resp_1", object: "chat.completion", model: "gpt-6.1-sol-2026-09-29" });
    expect(a.choices).toEqual([
      {
        index: 0,
        finish_reason: "stop",
        message: {
          role: "assistant",
          content: "Hello",
          reasoning: "Thinking.",
          reasoning_details: [
            { type: "reasoning.summary", summary: "Thinking.", id: "rs_1", format: F, index: 0 },
            { type: "reasoning.encrypted", data: "gAAAA-sealed", id: "rs_1", format: F, index: 1 },
          ],
        },
      },
    ]);
    expect(readUsage(a.usage)).toEqual({
      promptTokens: 1000,
      completionTokens: 50,
      reasoningTokens: 30,
      cachedTokens: 600,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
    });
  });

  it("function calls → tool_calls with the call_id; finish tool_calls; reasoning.exclude keeps the reasoning out", () => {
    const a = read(
      response([REASONING, { id: "fc_1", type: "function_call", status: "completed", call_id: "call_9", name: "get_weather", arguments: '{"city":"Rome"}' }]),
      body({ messages: [{ role: "user", content: "x" }], reasoning: { effort: "low", exclude: true } }),
    );
    expect(a.choices[0]).toEqual({
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }],
      },
    });
  });

  it("incomplete → length (content_filter when filtered); a refusal; raw reasoning text", () => {
    const cut = read(
      response([{ type: "message", content: [{ type: "output_text", text: "Hal" }] }], {
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
      }),
    );
    expect(cut.choices[0].finish_reason).toBe("length");
    const filtered = read(
      response([{ type: "message", content: [{ type: "refusal", refusal: "No." }] }], {
        status: "incomplete",
        incomplete_details: { reason: "content_filter" },
      }),
    );
    expect(filtered.choices[0]).toMatchObject({ finish_reason: "content_filter", message: { content: null, refusal: "No." } });
    const raw = read(response([{ id: "rs_2", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "raw" }] }]));
    expect(raw.choices[0].message).toMatchObject({
      reasoning: "raw",
      reasoning_details: [{ type: "reasoning.text", text: "raw", id: "rs_2", format: F, index: 0 }],
    });
  });

  it("a failed response, or not a response, is unusable", () => {
    expect(openAiResponses.answer(response([], { status: "failed", error: { code: "server_error", message: "boom" } }), ask)).toEqual({
      unusable: "the carrier's response failed: server_error: boom",
    });
    expect(openAiResponses.answer({ choices: [] }, ask)).toEqual({ unusable: "the carrier's answer is not an OpenAI response" });
  });
});

describe("OpenAI Responses carrier: the stream", () => {
  const ev = (json: Json) => {
    const data = JSON.stringify(json);
    return { data, bytes: new TextEncoder().encode(data).byteLength };
  };
  const decode = (events: Json[], req: Json = {}) => {
    const decoder = openAiResponses.streamDecoder(body({ messages: [{ role: "user", content: "x" }], ...req }))!;
    return events.flatMap((e) => decoder(ev(e))).map((e): Json | "[DONE]" => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
  };
  const head = { id: "resp_7", object: "response", created_at: 1790000000, status: "in_progress", model: "gpt-6.1-sol", output: [], usage: null };
  const usage = {
    input_tokens: 20,
    input_tokens_details: { cached_tokens: 8 },
    output_tokens: 9,
    output_tokens_details: { reasoning_tokens: 4 },
    total_tokens: 29,
  };
  const deltas = (out: (Json | "[DONE]")[]) =>
    (out.filter((c) => c !== "[DONE]" && (c as Json).choices?.length) as Json[]).map((c) => [c.choices[0].delta, c.choices[0].finish_reason]);

  it("reasoning summary, sealed reasoning, text; completed → finish, usage, [DONE]; one head on every chunk", () => {
    const out = decode([
      { type: "response.created", sequence_number: 0, response: head },
      { type: "response.in_progress", sequence_number: 1, response: head },
      { type: "response.output_item.added", sequence_number: 2, output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
      {
        type: "response.reasoning_summary_part.added",
        sequence_number: 3,
        item_id: "rs_1",
        output_index: 0,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      },
      { type: "response.reasoning_summary_text.delta", sequence_number: 4, item_id: "rs_1", output_index: 0, summary_index: 0, delta: "Think" },
      { type: "response.reasoning_summary_text.delta", sequence_number: 5, item_id: "rs_1", output_index: 0, summary_index: 0, delta: "ing" },
      { type: "response.reasoning_summary_text.done", sequence_number: 6, item_id: "rs_1", output_index: 0, summary_index: 0, text: "Thinking" },
      {
        type: "response.output_item.done",
        sequence_number: 7,
        output_index: 0,
        item: { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAAA" },
      },
      { type: "response.output_item.added", sequence_number: 8, output_index: 1, item: { id: "msg_1", type: "message", role: "assistant", content: [] } },
      { type: "response.content_part.added", sequence_number: 9, item_id: "msg_1", output_index: 1, content_index: 0, part: { type: "output_text", text: "" } },
      { type: "response.output_text.delta", sequence_number: 10, item_id: "msg_1", output_index: 1, content_index: 0, delta: "Hi" },
      { type: "response.output_text.done", sequence_number: 11, item_id: "msg_1", output_index: 1, content_index: 0, text: "Hi" },
      { type: "response.output_item.done", sequence_number: 12, output_index: 1, item: { id: "msg_1", type: "message" } },
      { type: "response.completed", sequence_number: 13, response: { ...head, status: "completed", usage } },
    ]);
    const chunks = out.filter((c) => c !== "[DONE]") as Json[];
    expect(new Set(chunks.map((c) => JSON.stringify([c.id, c.created, c.model])))).toEqual(new Set([JSON.stringify(["resp_7", 1790000000, "gpt-6.1-sol"])]));
    expect(deltas(out)).toEqual([
      [{ role: "assistant", content: "" }, null],
      [{ reasoning: "Think", reasoning_details: [{ type: "reasoning.summary", summary: "Think", id: "rs_1", format: F, index: 0 }] }, null],
      [{ reasoning: "ing", reasoning_details: [{ type: "reasoning.summary", summary: "ing", id: "rs_1", format: F, index: 0 }] }, null],
      [{ reasoning_details: [{ type: "reasoning.encrypted", data: "gAAAA", id: "rs_1", format: F, index: 1 }] }, null],
      [{ content: "Hi" }, null],
      [{}, "stop"],
    ]);
    expect(readUsage(chunks.at(-1)!.usage)).toEqual({
      promptTokens: 20,
      completionTokens: 9,
      reasoningTokens: 4,
      cachedTokens: 8,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
    });
    expect(out.at(-1)).toBe("[DONE]");
  });

  it("a function call: its id and name, then its argument deltas; the finish is tool_calls; raw reasoning text deltas", () => {
    const out = decode([
      { type: "response.created", response: head },
      { type: "response.reasoning_text.delta", item_id: "rs_1", output_index: 0, content_index: 0, delta: "raw" },
      { type: "response.output_item.added", output_index: 1, item: { id: "fc_1", type: "function_call", call_id: "call_1", name: "shell", arguments: "" } },
      { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: '{"cmd":' },
      { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: '"ls"}' },
      { type: "response.function_call_arguments.done", item_id: "fc_1", output_index: 1, arguments: '{"cmd":"ls"}' },
      { type: "response.output_item.added", output_index: 2, item: { id: "fc_2", type: "function_call", call_id: "call_2", name: "read", arguments: "" } },
      { type: "response.function_call_arguments.done", item_id: "fc_2", output_index: 2, arguments: '{"p":1}' },
      { type: "response.completed", response: { ...head, status: "completed", usage } },
    ]);
    expect(deltas(out).slice(1)).toEqual([
      [{ reasoning: "raw", reasoning_details: [{ type: "reasoning.text", text: "raw", id: "rs_1", format: F, index: 0 }] }, null],
      [{ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "shell", arguments: "" } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"cmd":' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '"ls"}' } }] }, null],
      [{ tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "read", arguments: "" } }] }, null],
      [{ tool_calls: [{ index: 1, function: { arguments: '{"p":1}' } }] }, null],
      [{}, "tool_calls"],
    ]);
  });

  it("incomplete → length with its usage; reasoning.exclude relays no reasoning", () => {
    const out = decode(
      [
        { type: "response.created", response: head },
        { type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, delta: "secret" },
        { type: "response.output_item.done", output_index: 0, item: { id: "rs_1", type: "reasoning", encrypted_content: "gAAAA" } },
        { type: "response.output_text.delta", output_index: 1, delta: "Hal" },
        { type: "response.incomplete", response: { ...head, status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage } },
      ],
      { reasoning: { effort: "low", exclude: true } },
    );
    expect(deltas(out)).toEqual([
      [{ role: "assistant", content: "" }, null],
      [{ content: "Hal" }, null],
      [{}, "length"],
    ]);
    expect(readUsage((out.at(-2) as Json).usage)?.completionTokens).toBe(9);
  });

  it("response.failed and error events become error chunks; a non-JSON event goes on to be refused", () => {
    const failed = decode([
      { type: "response.created", response: head },
      { type: "response.failed", response: { ...head, status: "failed", error: { code: "server_error", message: "boom" } } },
    ]);
    expect(failed.at(-1)).toMatchObject({ id: "resp_7", error: { message: "server_error: boom", code: 502 } });
    const error = decode([{ type: "error", code: "rate_limit_exceeded", message: "slow down", param: null }]);
    expect(error.at(-1)).toMatchObject({ error: { message: "rate_limit_exceeded: slow down", code: 502 } });
    const decoder = openAiResponses.streamDecoder(ask)!;
    expect(decoder({ data: "not json", bytes: 8 })).toEqual([{ data: "not json", bytes: 8 }]);
  });
});
