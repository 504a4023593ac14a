import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatFromMessages } from "../../src/protocols/inbound/anthropic-messages/request";
import { messagesStream } from "../../src/protocols/inbound/anthropic-messages/stream";
import { anthropicMessagesCaller } from "../../src/protocols/inbound/anthropic-messages";
import { chatFromResponses } from "../../src/protocols/inbound/openai-responses/request";
import { responsesStream } from "../../src/protocols/inbound/openai-responses/stream";
import { openAiResponses } from "../../src/protocols/inbound/openai-responses";
import { openEnvelopes, reasoningDetails } from "../../src/protocols/inbound/openai-responses/reasoning-envelope";
import { reasoningSealer } from "../../src/serve/reasoning-sealer";
import { settings } from "../../src/settings";
import type { AnswerFacts } from "../../src/protocols/inbound/caller-protocol";
import { plainUsage, type CarrierUsage } from "../../src/request/usage";
import type { SseEvent } from "../../src/http/sse-parser";
import { accounted } from "./accounted-stream";

// The inbound translations as tables, both directions: each protocol's request into the canonical (chat)
// request, and canonical answers and chunk streams back into the protocol's answers and events — with the
// traps peers fell into (tool results beside user text, blocks never closed, signatures re-serialized).
type Json = Record<string, any>;
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("anthropic/claude-sonnet-4.5")[0]!;
/** The deployment's sealer for one account, under a test key (src/serve/reasoning-sealer.ts: WebCrypto, as in workerd). */
const sealer = reasoningSealer(settings({ REASONING_SEAL_KEY: "test-reasoning-seal-key-0123456789abcdef" }), "acct-1")!;
const facts = (echo: Json = {}): AnswerFacts => ({ genId: "gen-abc", model: "m/x", provider: "P", created: 1700000000, echo, metadata: () => null, sealer });
/** The details an envelope of ours carries, opened as the next request's read opens it. */
async function opened(envelope: string): Promise<Json[] | undefined> {
  return (await openEnvelopes({ input: [{ type: "reasoning", encrypted_content: envelope }] }, sealer)).get(envelope);
}
/** A stream's text after its renderer's async step (sealing), as the caller receives it. */
async function delivered(step: TransformStream<Uint8Array, Uint8Array> | undefined, text: string): Promise<string> {
  return step ? new Response(new Blob([text]).stream().pipeThrough(step)).text() : text;
}
const chunk = (delta: Json, finish: string | null = null, usage?: Json): SseEvent => {
  const data = JSON.stringify({ id: "up-1", choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) });
  return { data, bytes: data.length } as SseEvent;
};
const USAGE = {
  prompt_tokens: 20,
  completion_tokens: 9,
  prompt_tokens_details: { cached_tokens: 8, cache_write_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 3 },
};
const usage: CarrierUsage = { promptTokens: 20, completionTokens: 9, reasoningTokens: 3, cachedTokens: 8, cacheWriteTokens: 4, cacheWrite1hTokens: 0 };

/** A stream's events as [name, data]. */
function events(text: string): Array<[string, Json]> {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((e) => {
      const [head, data] = e.split("\n");
      return [head!.replace("event: ", ""), JSON.parse(data!.replace("data: ", "")) as Json];
    });
}

describe("Anthropic Messages → canonical", () => {
  it.each<[string, Json, Json]>([
    [
      "system string → a system message",
      { system: "Be terse." },
      {
        messages: [
          { role: "system", content: "Be terse." },
          { role: "user", content: [{ type: "text", text: "hi" }] },
        ],
      },
    ],
    [
      "system blocks keep cache_control",
      { system: [{ type: "text", text: "S", cache_control: { type: "ephemeral" } }] },
      {
        messages: [
          { role: "system", content: [{ type: "text", text: "S", cache_control: { type: "ephemeral" } }] },
          { role: "user", content: [{ type: "text", text: "hi" }] },
        ],
      },
    ],
    ["stop_sequences → stop", { stop_sequences: ["END"] }, { stop: ["END"] }],
    ["tool_choice any → required", { tool_choice: { type: "any" } }, { tool_choice: "required" }],
    ["tool_choice tool → function", { tool_choice: { type: "tool", name: "f" } }, { tool_choice: { type: "function", function: { name: "f" } } }],
    ["disable_parallel_tool_use", { tool_choice: { type: "auto", disable_parallel_tool_use: true } }, { tool_choice: "auto", parallel_tool_calls: false }],
    ["thinking budget → reasoning.max_tokens", { thinking: { type: "enabled", budget_tokens: 2048 } }, { reasoning: { max_tokens: 2048 } }],
    [
      "output_config.effort → reasoning.effort",
      { thinking: { type: "adaptive" }, output_config: { effort: "high" } },
      { reasoning: { enabled: true, effort: "high" } },
    ],
    ["metadata.user_id → user", { metadata: { user_id: "u-1" } }, { user: "u-1" }],
    [
      "tools → function tools",
      { tools: [{ name: "f", description: "d", input_schema: { type: "object" } }] },
      { tools: [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object" } } }] },
    ],
  ])("%s", (_name, extra, want) => {
    const out = chatFromMessages({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }], ...extra });
    expect(out).toMatchObject(want);
  });

  it("a user turn's tool_result and the text beside it: the tool message first, then the text, nothing lost", () => {
    const out = chatFromMessages({
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "user", content: "weather?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "let me", signature: "sig==" },
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "tu_1", name: "w", input: { city: "Paris" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "tu_1", content: "18C" },
            { type: "text", text: "and tomorrow?" },
          ],
        },
      ],
    });
    expect(out.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather?" }] },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [{ id: "tu_1", type: "function", function: { name: "w", arguments: '{"city":"Paris"}' } }],
        reasoning_details: [{ type: "reasoning.text", text: "let me", signature: "sig==", format: "anthropic-claude-v1", index: 0 }],
      },
      { role: "tool", tool_call_id: "tu_1", content: "18C" },
      { role: "user", content: [{ type: "text", text: "and tomorrow?" }] },
    ]);
  });

  it("a mid-conversation system turn stays where it stands", () => {
    const out = chatFromMessages({
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "user", content: "a" },
        { role: "system", content: "note" },
      ],
    });
    expect(out.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "a" }] },
      { role: "system", content: "note" },
    ]);
  });

  it("beta flags travel as the router's field", () => {
    expect(chatFromMessages({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "a" }] }, ["x-1"])).toMatchObject({ anthropic_beta: ["x-1"] });
  });

  it.each<[string, Json, RegExp]>([
    ["an unknown field", { top_logprobs: 2 }, /Unsupported field for \/messages: top_logprobs/],
    ["no max_tokens", { max_tokens: undefined }, /max_tokens/],
    ["a server tool", { tools: [{ type: "web_search_20250305", name: "web_search" }] }, /server tools/],
    ["a bad role", { messages: [{ role: "tool", content: "x" }] }, /messages\.0\.role/],
    ["an unknown output_config key", { output_config: { verbosity: "low" } }, /output_config: verbosity/],
  ])("refuses %s with a 400 naming it", (_name, extra, message) => {
    expect(() => chatFromMessages({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }], ...extra })).toThrow(message);
  });
});

describe("canonical → Anthropic Messages", () => {
  it("an answer: thinking with its signature, text, tool_use; usage with input excluding the cache", () => {
    const answer = {
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: "Sure.",
            reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "S1" }],
            tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
          },
        },
      ],
    };
    const out = anthropicMessagesCaller.answer(
      answer,
      { tokens: usage, charged: { costNano: 1, insured: false, cacheDiscountNano: 0 }, endpoint },
      facts(),
    ) as Json;
    expect(out).toMatchObject({
      id: "msg_abc",
      type: "message",
      role: "assistant",
      stop_reason: "tool_use",
      content: [
        { type: "thinking", thinking: "hmm", signature: "S1" },
        { type: "text", text: "Sure." },
        { type: "tool_use", id: "c1", name: "f", input: { a: 1 } },
      ],
      usage: { input_tokens: 8, cache_read_input_tokens: 8, cache_creation_input_tokens: 4, output_tokens: 9 },
    });
  });

  it("a stream: every event kind, each block opened and closed at its index, in order", () => {
    const s = accounted(messagesStream(facts()), endpoint);
    let text = "";
    for (const c of [
      chunk({ reasoning: "hm", reasoning_details: [{ type: "reasoning.text", text: "hm", index: 0 }] }),
      chunk({ reasoning_details: [{ type: "reasoning.text", text: "", signature: "SIG", index: 0 }] }),
      chunk({ content: "Hel" }),
      chunk({ content: "lo" }),
      chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }),
      chunk({}, "tool_calls", USAGE),
    ])
      text += s.rewrite(c) as string;
    text += s.keepalive();
    text += s.end(null);
    const ev = events(text);
    expect(ev.map(([n]) => n)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "ping",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(ev[4]![1]).toMatchObject({ index: 0, delta: { type: "signature_delta", signature: "SIG" } });
    expect(ev[10]![1]).toMatchObject({ index: 2, content_block: { type: "tool_use", id: "c1", name: "f" } });
    expect(ev[15]![1]).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { input_tokens: 8, cache_read_input_tokens: 8, output_tokens: 9 } });
  });

  it("a failed stream closes its open block and ends with an error event", () => {
    const s = accounted(messagesStream(facts()), endpoint);
    const text = (s.rewrite(chunk({ content: "x" })) as string) + s.end({ status: 502, message: "lost" });
    expect(
      events(text)
        .map(([n]) => n)
        .slice(-2),
    ).toEqual(["content_block_stop", "error"]);
    expect(events(text).at(-1)![1]).toEqual({ type: "error", error: { type: "api_error", message: "lost" } });
  });

  it.each([
    [401, "authentication_error"],
    [402, "billing_error"],
    [429, "rate_limit_error"],
    [503, "overloaded_error"],
    [500, "api_error"],
  ])("error %i → %s", (status, type) => {
    expect(anthropicMessagesCaller.errorBody({ status: status as 400, message: "m" })).toEqual({ type: "error", error: { type, message: "m" } });
  });
});

describe("OpenAI Responses → canonical", () => {
  it.each<[string, Json, Json]>([
    ["input string → a user message", { input: "hi" }, { messages: [{ role: "user", content: "hi" }] }],
    [
      "instructions → a system message first",
      { instructions: "S", input: "hi" },
      {
        messages: [
          { role: "system", content: "S" },
          { role: "user", content: "hi" },
        ],
      },
    ],
    ["max_output_tokens → max_tokens", { input: "hi", max_output_tokens: 50 }, { max_tokens: 50 }],
    ["prompt_cache_key → the session and the cache key", { input: "hi", prompt_cache_key: "k" }, { session_id: "k", prompt_cache_key: "k" }],
    [
      "text.format json_schema → response_format",
      { input: "hi", text: { format: { type: "json_schema", name: "n", schema: { type: "object" }, strict: true } } },
      { response_format: { type: "json_schema", json_schema: { name: "n", schema: { type: "object" }, strict: true } } },
    ],
    [
      "tool_choice {type, name} → function",
      { input: "hi", tool_choice: { type: "function", name: "f" } },
      { tool_choice: { type: "function", function: { name: "f" } } },
    ],
    [
      "function tools",
      { input: "hi", tools: [{ type: "function", name: "f", parameters: { type: "object" }, strict: true }] },
      { tools: [{ type: "function", function: { name: "f", parameters: { type: "object" }, strict: true } }] },
    ],
    ["reasoning {effort, summary}", { input: "hi", reasoning: { effort: "low", summary: "auto" } }, { reasoning: { effort: "low", summary: "auto" } }],
    [
      "developer → system",
      {
        input: [
          { role: "developer", content: "D" },
          { role: "user", content: "u" },
        ],
      },
      {
        messages: [
          { role: "system", content: "D" },
          { role: "user", content: "u" },
        ],
      },
    ],
  ])("%s", (_name, body, want) => {
    expect(chatFromResponses({ model: "m", ...body }).chat).toMatchObject(want);
  });

  it("one assistant turn from its reasoning, message and function calls; outputs as tool messages, then the user's words", async () => {
    const sealed =
      "swy2." + (await sealer.seal(JSON.stringify([{ type: "reasoning.text", text: "t", signature: "S+/=", format: "anthropic-claude-v1", index: 0 }])));
    const request = {
      model: "m",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "q" },
            { type: "input_image", image_url: "data:image/png;base64,AA", detail: "low" },
          ],
        },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "t" }], encrypted_content: sealed },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
        { type: "function_call", call_id: "c1", name: "f", arguments: '{"a":1}' },
        { type: "function_call", call_id: "c2", name: "g", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "one" },
        { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "two" }] },
        { role: "user", content: "next" },
      ],
    };
    const { chat } = chatFromResponses(request, await openEnvelopes(request, sealer));
    expect(chat.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "q" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "low" } },
        ],
      },
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } },
          { id: "c2", type: "function", function: { name: "g", arguments: "{}" } },
        ],
        // The signature comes back byte for byte.
        reasoning_details: [{ type: "reasoning.text", text: "t", signature: "S+/=", format: "anthropic-claude-v1", index: 0 }],
      },
      { role: "tool", tool_call_id: "c1", content: "one" },
      { role: "tool", tool_call_id: "c2", content: "two" },
      { role: "user", content: "next" },
    ]);
  });

  it("someone else's encrypted_content passes on as it came", () => {
    expect(reasoningDetails("gAAAA-opaque", new Map(), "input.0")).toEqual([
      { type: "reasoning.encrypted", data: "gAAAA-opaque", format: "openai-responses-v1" },
    ]);
  });

  it.each<[string, Json, RegExp]>([
    ["store: true", { store: true }, /stateless/],
    ["previous_response_id", { previous_response_id: "r" }, /previous_response_id/],
    [
      "a hosted tool under provider.require_parameters",
      { tools: [{ type: "file_search" }], provider: { require_parameters: true } },
      /tools\.0: file_search tools/,
    ],
    ["an item_reference", { input: [{ type: "item_reference", id: "x" }] }, /item_reference/],
    ["an unknown item", { input: [{ type: "computer_call_output" }] }, /computer_call_output item/],
    ["truncation auto", { truncation: "auto" }, /truncation/],
    ["an unknown field", { conversation: "c" }, /Unsupported field for \/responses: conversation/],
  ])("refuses %s with a 400 naming it", (_name, extra, message) => {
    expect(() => chatFromResponses({ model: "m", input: "hi", ...extra })).toThrow(message);
  });
});

describe("canonical → OpenAI Responses", () => {
  it("an answer: reasoning (sealed when asked), message, function calls; usage with cached and reasoning tokens", async () => {
    const answer = {
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: "Sure.",
            reasoning: "hmm",
            reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "S1" }],
            tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
          },
        },
      ],
    };
    const out = (await openAiResponses.answer(
      answer,
      { tokens: usage, charged: { costNano: 1, insured: false, cacheDiscountNano: 0 }, endpoint },
      facts({ include_encrypted_reasoning: true, instructions: "S", tools: [] }),
    )) as Json;
    expect(out).toMatchObject({
      id: "resp_abc",
      object: "response",
      status: "completed",
      instructions: "S",
      output_text: "Sure.",
      output: [
        { type: "reasoning", summary: [{ type: "summary_text", text: "hmm" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Sure." }] },
        { type: "function_call", call_id: "c1", name: "f", arguments: '{"a":1}' },
      ],
      usage: {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 8, cache_write_tokens: 4 },
        output_tokens: 9,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 29,
      },
    });
    expect(out.output[0].encrypted_content).toMatch(/^swy2\.[A-Za-z0-9_-]+$/);
    expect(await opened(out.output[0].encrypted_content)).toEqual([{ type: "reasoning.text", text: "hmm", signature: "S1" }]);
  });

  it("an answer cut by the token cap is incomplete", async () => {
    const out = (await openAiResponses.answer(
      { choices: [{ index: 0, finish_reason: "length", message: { role: "assistant", content: "a" } }] },
      { tokens: plainUsage(1, 1, 0), charged: { costNano: 1, insured: false, cacheDiscountNano: 0 }, endpoint },
      facts(),
    )) as Json;
    expect(out).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
  });

  it("a stream: only documented events, rising sequence numbers, every item added then done in order", async () => {
    const s = accounted(responsesStream(facts({ include_encrypted_reasoning: true })), endpoint);
    let text = "";
    for (const c of [
      chunk({ reasoning: "hm", reasoning_details: [{ type: "reasoning.text", text: "hm", index: 0 }] }),
      chunk({ reasoning_details: [{ type: "reasoning.text", text: "", signature: "SIG", index: 0 }] }),
      chunk({ content: "Hel" }),
      chunk({ content: "lo" }),
      chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }),
      chunk({}, "tool_calls", USAGE),
    ])
      text += s.rewrite(c) as string;
    text += s.end(null);
    const ev = events(await delivered(s.asyncStep, text));
    expect(ev.map(([n]) => n)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(ev.map(([, d]) => d.sequence_number)).toEqual(ev.map((_, i) => i));
    expect(ev.every(([n, d]) => d.type === n)).toBe(true);
    // The signed thinking, joined from its fragments, sealed whole.
    expect(await opened(ev[7]![1].item.encrypted_content)).toEqual([{ type: "reasoning.text", text: "hm", index: 0, signature: "SIG" }]);
    expect(ev[18]![1]).toMatchObject({ arguments: '{"a":1}', name: "f" });
    const final = ev.at(-1)![1].response;
    expect(final.output.map((i: Json) => i.type)).toEqual(["reasoning", "message", "function_call"]);
    // The final response carries the same envelope as the item's done event: sealed once.
    expect(final.output[0].encrypted_content).toBe(ev[7]![1].item.encrypted_content);
    expect(final.usage).toMatchObject({ input_tokens: 20, output_tokens: 9 });
  });

  it("a sealed stream: its render holds placeholders, not the details; the async step seals each once, even split across writes", async () => {
    const details = [{ type: "reasoning.text", text: "secret plan", signature: "SIG-42", index: 0 }];
    const s = accounted(responsesStream(facts({ include_encrypted_reasoning: true })), endpoint);
    const text =
      (s.rewrite(chunk({ reasoning: "secret plan", reasoning_details: details })) as string) +
      (s.rewrite(chunk({ content: "d’accord — ✓ é" }, "stop", USAGE)) as string) +
      s.end(null);
    expect(text).not.toContain("SIG-42");
    expect(text).toMatch(/"encrypted_content":"swy2-pending-[0-9a-f]{32}-0"/);
    // Seven bytes a write: placeholders and multi-byte characters fall across writes.
    const bytes = new TextEncoder().encode(text);
    const split = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.slice(i, i + 7));
        c.close();
      },
    });
    const out = await new Response(split.pipeThrough(s.asyncStep!)).text();
    expect(out).not.toContain("swy2-pending");
    const ev = events(out);
    const done = ev.find(([n, d]) => n === "response.output_item.done" && d.item.type === "reasoning")![1];
    expect(await opened(done.item.encrypted_content)).toEqual(details);
    expect(ev.at(-1)![1].response.output[0].encrypted_content).toBe(done.item.encrypted_content);
    // Everything else went out as rendered.
    expect(out.replaceAll(done.item.encrypted_content, "E")).toBe(text.replace(/swy2-pending-[0-9a-f]{32}-0/g, "E"));
  });

  it("a failed stream ends with response.failed carrying the error", () => {
    const s = accounted(responsesStream(facts()), endpoint);
    const ev = events((s.rewrite(chunk({ content: "x" })) as string) + s.end({ status: 502, message: "lost" }));
    expect(ev.at(-1)![0]).toBe("response.failed");
    expect(ev.at(-1)![1].response).toMatchObject({ status: "failed", error: { code: "server_error", message: "lost" } });
  });
});
