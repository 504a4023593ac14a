import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import { Untranslatable } from "../../src/request/errors";
import { readUsage } from "../../src/request/usage";
import { anthropicMessages } from "../../src/protocols/outbound/anthropic";
import { anthropicBody } from "../../src/protocols/outbound/anthropic/request";
import { carrierProtocol } from "../../src/protocols/outbound";
import { carrierHeaders } from "../../src/carriers/carrier-headers";
import { WIRE } from "./renderer-fixture";

// The Anthropic Messages carrier adapter, both directions, from wire fixtures in Anthropic's documented shapes.
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("anthropic/claude-sonnet-4.5")[0]!;
type Json = Record<string, any>;
const body = (json: Json) => chatRequestSchema.parse({ model: "anthropic/claude-sonnet-4.5", ...json });
const wire = (json: Json, stream = false, userHash: string | null = null) => anthropicBody(body(json), stream, userHash, endpoint) as Json;

describe("Anthropic carrier: the request", () => {
  it("is the protocol of the anthropic carrier, with its URL and headers", () => {
    expect(carrierProtocol(endpoint)).toBe(anthropicMessages);
    expect(anthropicMessages.url("https://api.anthropic.com", endpoint, true)).toBe("https://api.anthropic.com/v1/messages");
    expect(carrierHeaders(endpoint, "sk-ant")).toEqual({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "anthropic-version": "2023-06-01",
      "x-api-key": "sk-ant",
    });
  });

  it.each([
    {
      name: "system → top-level system; max_tokens from the model when unset; stop → stop_sequences; user hashed into metadata",
      req: {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ],
        stop: "END",
        temperature: 0.5,
      },
      userHash: "h1",
      want: {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 64000,
        system: [{ type: "text", text: "Be brief." }],
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        temperature: 0.5,
        stop_sequences: ["END"],
        metadata: { user_id: "h1" },
      },
    },
    {
      name: "multi-turn tool use: tool_use blocks, results first in the next user turn, the user's text beside them kept after",
      req: {
        max_tokens: 100,
        messages: [
          { role: "user", content: "weather in Paris and Rome?" },
          {
            role: "assistant",
            content: "Checking.",
            tool_calls: [
              { id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
              { id: "toolu_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: "tool", tool_call_id: "toolu_1", content: "18C" },
          { role: "tool", tool_call_id: "toolu_2", content: "24C" },
          { role: "user", content: "And in Fahrenheit?" },
        ],
        tools: [
          {
            type: "function",
            function: { name: "weather", description: "Weather now", parameters: { type: "object", properties: { city: { type: "string" } } } },
          },
        ],
        tool_choice: "required",
        parallel_tool_calls: false,
      },
      want: {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 100,
        messages: [
          { role: "user", content: [{ type: "text", text: "weather in Paris and Rome?" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Checking." },
              { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } },
              { type: "tool_use", id: "toolu_2", name: "weather", input: { city: "Rome" } },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "18C" },
              { type: "tool_result", tool_use_id: "toolu_2", content: "24C" },
              { type: "text", text: "And in Fahrenheit?" },
            ],
          },
        ],
        tools: [{ name: "weather", description: "Weather now", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
        tool_choice: { type: "any", disable_parallel_tool_use: true },
      },
    },
    {
      name: "images (data URL → base64, https → url), cache_control kept where the caller put it",
      req: {
        max_tokens: 10,
        messages: [
          { role: "system", content: [{ type: "text", text: "long rules", cache_control: { type: "ephemeral" } }] },
          {
            role: "user",
            content: [
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
              { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
              { type: "text", text: "what?", cache_control: { type: "ephemeral", ttl: "1h" } },
            ],
          },
        ],
      },
      want: {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 10,
        system: [{ type: "text", text: "long rules", cache_control: { type: "ephemeral" } }],
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
              { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
              { type: "text", text: "what?", cache_control: { type: "ephemeral", ttl: "1h" } },
            ],
          },
        ],
      },
    },
    {
      name: "a prompt_cache_key (OpenAI's ask for its cache: Codex's every turn) and no breakpoint → Anthropic's automatic caching",
      req: { max_tokens: 10, prompt_cache_key: "conv-1", messages: [{ role: "user", content: "hi" }] },
      want: {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 10,
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        cache_control: { type: "ephemeral" },
      },
    },
    {
      name: "a prompt_cache_key beside the caller's own breakpoints → only theirs",
      req: {
        max_tokens: 10,
        prompt_cache_key: "conv-1",
        messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
      },
      want: {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 10,
        messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
      },
    },
    {
      name: "OpenRouter's request-level cache_control → Anthropic's automatic caching, its ttl kept",
      req: { max_tokens: 10, cache_control: { type: "ephemeral", ttl: "1h" }, messages: [{ role: "user", content: "hi" }] },
      want: {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 10,
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        cache_control: { type: "ephemeral", ttl: "1h" },
      },
    },
    {
      name: "signed thinking from the last answer goes back first in its turn, byte for byte; reasoning effort → a thinking budget",
      req: {
        max_tokens: 10000,
        reasoning: { effort: "high" },
        messages: [
          { role: "user", content: "2+2?" },
          {
            role: "assistant",
            content: "4",
            reasoning_details: [
              { type: "reasoning.text", text: "add \u00e9 \\n", signature: "EqQBCkYIARgCKkBSIG+/=", format: "anthropic-claude-v1", index: 0 },
              { type: "reasoning.encrypted", data: "REDACTED==", format: "anthropic-claude-v1", index: 1 },
            ],
          },
          { role: "user", content: "times 3?" },
        ],
      },
      want: {
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 10000,
        messages: [
          { role: "user", content: [{ type: "text", text: "2+2?" }] },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "add \u00e9 \\n", signature: "EqQBCkYIARgCKkBSIG+/=" },
              { type: "redacted_thinking", data: "REDACTED==" },
              { type: "text", text: "4" },
            ],
          },
          { role: "user", content: [{ type: "text", text: "times 3?" }] },
        ],
        thinking: { type: "enabled", budget_tokens: 8000 },
      },
    },
    {
      name: "parameters Anthropic does not take are left out; a stream asks for one",
      req: { max_tokens: 5, n: 1, frequency_penalty: 0.1, presence_penalty: 0.1, seed: 3, logprobs: true, messages: [{ role: "user", content: "x" }] },
      stream: true,
      want: { model: "claude-sonnet-4-5-20250929", max_tokens: 5, messages: [{ role: "user", content: [{ type: "text", text: "x" }] }], stream: true },
    },
  ])("$name", ({ req, want, userHash, stream }) => {
    expect(wire(req, stream ?? false, userHash ?? null)).toEqual(want);
  });

  it.each([
    [
      { max_tokens: 10, messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x", format: "wav" } }] }] },
      /do not take input_audio/,
    ],
    [{ max_tokens: 10, messages: [{ role: "user", content: "x" }], response_format: { type: "json_object" } }, /response_format json_object has no equivalent/],
    [{ max_tokens: 1000, reasoning: { effort: "low" }, messages: [{ role: "user", content: "x" }] }, /max_tokens above 1024/],
    [
      {
        max_tokens: 10,
        messages: [{ role: "assistant", content: "", tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "[1]" } }] }],
      },
      /not a JSON object/,
    ],
    [
      {
        max_tokens: 10,
        messages: [
          {
            role: "user",
            content: [1, 2, 3, 4, 5].map((i) => ({ type: "text", text: String(i), cache_control: { type: "ephemeral" } })),
          },
        ],
      },
      /5 cache_control breakpoints; Anthropic takes at most 4/,
    ],
  ])("refuses what it cannot express (%#)", (req, message) => {
    expect(() => wire(req)).toThrow(Untranslatable);
    expect(() => wire(req)).toThrow(message);
  });
});

describe("Anthropic carrier: the token count", () => {
  it("counts the prompt as the completion sends it, without its generation fields; the thinking budget against the model's largest completion", () => {
    const count = anthropicMessages.tokenCount!;
    expect(count.url("https://api.anthropic.com/")).toBe("https://api.anthropic.com/v1/messages/count_tokens");
    const req = body({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ],
      max_tokens: 1,
      temperature: 0.5,
      stop: "END",
      user: "u",
      stream: true,
      reasoning: { max_tokens: 2000 },
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      tool_choice: "required",
    });
    expect(JSON.parse(count.body(req, endpoint))).toEqual({
      model: endpoint.upstream_model,
      system: [{ type: "text", text: "Be brief." }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      tools: [{ name: "f", input_schema: { type: "object" } }],
      // Anthropic refuses forcing a tool while thinking (the catalog's refuses_forced_tool_choice): auto, as the completion sends it.
      tool_choice: { type: "auto" },
      thinking: { type: "enabled", budget_tokens: 2000 },
    });
    expect(count.answer({ input_tokens: 42 })).toBe(42);
    expect(count.answer({ input_tokens: -1 })).toBeNull();
    expect(count.answer({ tokens: 42 })).toBeNull();
    expect(count.answer(null)).toBeNull();
  });
});

describe("Anthropic carrier: structured outputs", () => {
  const schema = { type: "object", properties: { a: { type: "number" } }, required: ["a"], additionalProperties: false };
  const req = body({
    max_tokens: 10,
    messages: [{ role: "user", content: "x" }],
    response_format: { type: "json_schema", json_schema: { name: "a", schema } },
  });

  it("json_schema → output_format with the structured-outputs beta flag, where the model takes it", () => {
    expect(JSON.parse(anthropicMessages.bodies(req, false, null)(endpoint))).toMatchObject({ output_format: { type: "json_schema", schema } });
    expect(anthropicMessages.requestHeaders(req, endpoint)).toEqual({ "anthropic-beta": "structured-outputs-2025-11-13" });
    expect(anthropicMessages.requestHeaders(body({ messages: [{ role: "user", content: "x" }] }), endpoint)).toBeNull();
  });

  it("refused where the model does not take structured outputs", () => {
    const haiku = catalog.endpoints("anthropic/claude-haiku-4.5")[0]!;
    expect(() => anthropicMessages.bodies(req, false, null)(haiku)).toThrow(/does not take structured outputs/);
  });
});

describe("Anthropic carrier: the answer", () => {
  const message = (content: Json[], stop_reason: string, usage: Json = { input_tokens: 10, output_tokens: 5 }) => ({
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content,
    stop_reason,
    stop_sequence: null,
    usage,
  });

  it.each([
    {
      name: "text; cache reads and writes in the prompt (OpenRouter's meaning)",
      json: message([{ type: "text", text: "Hello" }], "end_turn", {
        input_tokens: 10,
        cache_creation_input_tokens: 200,
        cache_read_input_tokens: 3000,
        output_tokens: 5,
        cache_creation: { ephemeral_5m_input_tokens: 150, ephemeral_1h_input_tokens: 50 },
      }),
      choice: { index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" },
      usage: { promptTokens: 3210, completionTokens: 5, reasoningTokens: 0, cachedTokens: 3000, cacheWriteTokens: 200, cacheWrite1hTokens: 50 },
    },
    {
      name: "tool calls with finish_reason tool_calls; signed thinking into reasoning and reasoning_details",
      json: message(
        [
          { type: "thinking", thinking: "I should call it", signature: "sig==" },
          { type: "tool_use", id: "toolu_9", name: "weather", input: { city: "Paris" } },
        ],
        "tool_use",
      ),
      choice: {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          reasoning: "I should call it",
          reasoning_details: [
            // Who signed it: the next turn passes the signature on only to that model.
            {
              type: "reasoning.text",
              text: "I should call it",
              signature: "sig==",
              format: "anthropic-claude-v1",
              index: 0,
              signed_by: "claude-sonnet-4-5-20250929",
            },
          ],
          tool_calls: [{ id: "toolu_9", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }],
        },
        finish_reason: "tool_calls",
      },
      usage: { promptTokens: 10, completionTokens: 5, reasoningTokens: 4, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 },
    },
    {
      name: "parallel tool calls, with the text before them",
      json: message(
        [
          { type: "text", text: "Both:" },
          { type: "tool_use", id: "toolu_a", name: "weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_b", name: "weather", input: { city: "Rome" } },
        ],
        "tool_use",
      ),
      choice: {
        index: 0,
        message: {
          role: "assistant",
          content: "Both:",
          tool_calls: [
            { id: "toolu_a", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
            { id: "toolu_b", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
          ],
        },
        finish_reason: "tool_calls",
      },
      usage: { promptTokens: 10, completionTokens: 5, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 },
    },
    {
      name: "max_tokens → length",
      json: message([{ type: "text", text: "Hel" }], "max_tokens"),
      choice: { index: 0, message: { role: "assistant", content: "Hel" }, finish_reason: "length" },
      usage: { promptTokens: 10, completionTokens: 5, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 },
    },
    {
      name: "refusal → content_filter",
      json: message([], "refusal"),
      choice: { index: 0, message: { role: "assistant", content: "" }, finish_reason: "content_filter" },
      usage: { promptTokens: 10, completionTokens: 5, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 },
    },
  ])("$name", ({ json, choice, usage }) => {
    const read = anthropicMessages.answer(json, body({ messages: [{ role: "user", content: "x" }] }));
    if (!("answer" in read)) throw new Error(read.unusable);
    expect(read.answer.id).toBe("msg_01");
    expect(read.answer.choices).toEqual([choice]);
    expect(readUsage(read.answer.usage)).toEqual(usage);
  });

  it("with reasoning.exclude the thinking is billed but not returned", () => {
    const json = message(
      [
        { type: "thinking", thinking: "secret", signature: "s" },
        { type: "text", text: "ok" },
      ],
      "end_turn",
    );
    const read = anthropicMessages.answer(
      json,
      body({ max_tokens: 2000, reasoning: { exclude: true, effort: "low" }, messages: [{ role: "user", content: "x" }] }),
    );
    if (!("answer" in read)) throw new Error(read.unusable);
    expect(read.answer.choices).toEqual([{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }]);
    expect(readUsage(read.answer.usage)?.reasoningTokens).toBe(2);
  });

  it.each([[{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }], [{ choices: [] }], [null]])("unusable: %j", (json) => {
    expect(anthropicMessages.answer(json, body({ messages: [{ role: "user", content: "x" }] }))).toEqual({
      unusable: "the carrier's answer is not an Anthropic message",
    });
  });
});

describe("Anthropic carrier: the stream", () => {
  const ev = (json: Json) => {
    const data = JSON.stringify(json);
    return { data, bytes: new TextEncoder().encode(data).byteLength };
  };
  const decode = (events: Json[], req: Json = {}) => {
    const decoder = anthropicMessages.streamDecoder(body({ messages: [{ role: "user", content: "x" }], ...req }))!;
    return events.flatMap((e) => decoder(ev(e))).map((e) => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
  };
  const start = WIRE[0] as { type: string; message: Json }; // message_start: id msg_7, model claude-x, usage 12 in (100 cache read, 20 cache write), 1 out

  it("every event kind becomes chunks with one head; usage once at the end, then [DONE]", () => {
    const out = decode([
      start,
      { type: "ping" },
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig/+=" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: 'Hi "there"\n' } },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "f", input: {} } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"a":' } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "1}" } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 30 } },
      { type: "message_stop" },
    ]);
    const heads = new Set(out.filter((c) => c !== "[DONE]").map((c: Json) => JSON.stringify([c.id, c.object, c.created, c.model])));
    expect(heads.size).toBe(1);
    const deltas = out.filter((c) => c !== "[DONE]" && c.choices.length).map((c: Json) => [c.choices[0].delta, c.choices[0].finish_reason]);
    expect(deltas).toEqual([
      [{ role: "assistant", content: "" }, null],
      [{ reasoning: "hmm", reasoning_details: [{ type: "reasoning.text", text: "hmm", format: "anthropic-claude-v1", index: 0 }] }, null],
      [
        { reasoning_details: [{ type: "reasoning.text", text: "", signature: "sig/+=", format: "anthropic-claude-v1", index: 0, signed_by: "claude-x" }] },
        null,
      ],
      [{ content: 'Hi "there"\n' }, null],
      [{ tool_calls: [{ index: 0, id: "toolu_1", type: "function", function: { name: "f", arguments: "" } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }, null],
      [{}, "tool_calls"],
    ]);
    const usage = out.at(-2) as Json;
    expect(usage.choices).toEqual([]);
    expect(usage.id).toBe("msg_7");
    expect(readUsage(usage.usage)).toEqual({
      promptTokens: 132,
      completionTokens: 30,
      reasoningTokens: 1,
      cachedTokens: 100,
      cacheWriteTokens: 20,
      cacheWrite1hTokens: 0,
    });
    expect(out.at(-1)).toBe("[DONE]");
  });

  it("with reasoning.exclude the thinking is not relayed, yet counted in the usage's reasoning tokens", () => {
    const out = decode(
      [
        start,
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "secret plan" } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
        { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "ok" } },
        { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } },
        { type: "message_stop" },
      ],
      { max_tokens: 2000, reasoning: { effort: "low", exclude: true } },
    );
    expect(JSON.stringify(out)).not.toContain("secret");
    expect(JSON.stringify(out)).not.toContain("reasoning_details");
    expect((out.at(-2) as Json).usage.completion_tokens_details.reasoning_tokens).toBe(3);
  });

  it("parallel tool calls: each tool_use block its own tool call index, its arguments to it", () => {
    const out = decode([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_a", name: "f", input: {} } },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_b", name: "g", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"b":2}' } },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"a":1}' } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 12 } },
      { type: "message_stop" },
    ]);
    const calls = out.filter((c) => c !== "[DONE]" && c.choices[0]?.delta.tool_calls).map((c: Json) => c.choices[0].delta.tool_calls[0]);
    expect(calls).toEqual([
      { index: 0, id: "toolu_a", type: "function", function: { name: "f", arguments: "" } },
      { index: 1, id: "toolu_b", type: "function", function: { name: "g", arguments: "" } },
      { index: 1, function: { arguments: '{"b":2}' } },
      { index: 0, function: { arguments: '{"a":1}' } },
    ]);
  });

  it("a mid-stream error event becomes an error chunk (the caller's stream fails)", () => {
    const out = decode([start, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]);
    expect(out.at(-1)).toMatchObject({ id: "msg_7", error: { message: "overloaded_error: Overloaded", code: 502 } });
  });

  it("a stream without usage ends with [DONE] only (the relay then estimates)", () => {
    const { usage: _usage, ...message } = start.message;
    const out = decode([{ type: "message_start", message }, { type: "message_delta", delta: { stop_reason: "end_turn" } }, { type: "message_stop" }]);
    expect(out.map((c) => (c === "[DONE]" ? c : c.choices[0]?.finish_reason))).toEqual([null, "stop", "[DONE]"]);
  });
});
