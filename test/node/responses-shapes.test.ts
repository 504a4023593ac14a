import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatFromResponses } from "../../src/protocols/inbound/openai-responses/request";
import { responsesStream } from "../../src/protocols/inbound/openai-responses/stream";
import { openAiResponses } from "../../src/protocols/inbound/openai-responses";
import { responseObject } from "../../src/protocols/inbound/openai-responses/answer";
import { ApiError } from "../../src/request/errors";
import type { AnswerFacts } from "../../src/protocols/inbound/caller-protocol";
import { plainUsage } from "../../src/request/usage";
import type { SseEvent } from "../../src/http/sse-parser";
import { accounted } from "./accounted-stream";

// The Responses API as OpenAI's clients read it, table by table on the adapter's pure functions: the
// response object's echoed fields in the schema's types (OpenAI's defaults where the request gave none),
// function tools strict by default, raw reasoning as reasoning_text content, errors with type and param.
type Json = Record<string, any>;
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("meta-llama/llama-3.1-8b-instruct")[0]!;
const facts = (echo: Json = {}): AnswerFacts => ({
  genId: "gen-abc",
  model: "m/x",
  provider: "P",
  created: 1700000000,
  echo,
  metadata: () => null,
  sealer: null,
});
const echoOf = (req: Json) => chatFromResponses({ model: "m/x", input: "hi", ...req }).echo;
const respond = (req: Json) => responseObject(facts(echoOf(req)), { status: "completed", output: [], usage: null, completedAt: 1700000001 });
const billed = { tokens: plainUsage(5, 7, 0), charged: { costNano: 1, insured: false, cacheDiscountNano: 0 }, endpoint };
const chunk = (delta: Json, finish: string | null = null): SseEvent => {
  const data = JSON.stringify({ id: "up-1", choices: [{ index: 0, delta, finish_reason: finish }] });
  return { data, bytes: data.length } as SseEvent;
};
function events(text: string): Array<[string, Json]> {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((e) => {
      const [head, data] = e.split("\n");
      return [head!.replace("event: ", ""), JSON.parse(data!.replace("data: ", "")) as Json];
    });
}
const WEATHER = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const CLOSED = { ...WEATHER, additionalProperties: false };

describe("the response object echoes the request in the schema's types", () => {
  it("nothing given: OpenAI's defaults, never null where the schema wants a number or a string", () => {
    expect(respond({})).toMatchObject({
      temperature: 1,
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      service_tier: "default",
      top_logprobs: 0,
      truncation: "disabled",
      tool_choice: "auto",
      tools: [],
      parallel_tool_calls: true,
      text: { format: { type: "text" } },
      reasoning: { effort: null, summary: null },
      max_output_tokens: null,
      max_tool_calls: null,
      store: false,
      background: false,
      metadata: {},
      instructions: null,
      user: null,
      safety_identifier: null,
      prompt_cache_key: null,
      previous_response_id: null,
    });
  });

  it("the request's values, echoed", () => {
    expect(
      respond({
        temperature: 0.2,
        top_p: 0.9,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        service_tier: "flex",
        max_output_tokens: 99,
        parallel_tool_calls: false,
        reasoning: { effort: "low" },
        text: { verbosity: "low" },
        metadata: { a: "b" },
        tool_choice: "required",
        instructions: "I",
        user: "u1",
      }),
    ).toMatchObject({
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      service_tier: "flex",
      max_output_tokens: 99,
      parallel_tool_calls: false,
      reasoning: { effort: "low", summary: null },
      text: { format: { type: "text" }, verbosity: "low" },
      metadata: { a: "b" },
      tool_choice: "required",
      instructions: "I",
      user: "u1",
    });
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["auto (OpenAI reports the tier it resolved to)", "auto"],
  ])("service_tier %s → default", (_, tier) => {
    expect(respond({ service_tier: tier }).service_tier).toBe("default");
  });
});

describe("function tools: strict unless said otherwise (the Responses API's default)", () => {
  it.each<[string, Json, boolean | undefined, Json]>([
    [
      "no strict, a schema strict mode can enforce: strict, to the carrier and in the echo",
      { type: "function", name: "w", parameters: CLOSED },
      true,
      { type: "function", name: "w", description: null, parameters: CLOSED, strict: true },
    ],
    [
      "no strict, an open schema (no additionalProperties: false): not strict, as OpenAI serves it",
      { type: "function", name: "w", description: "d", parameters: WEATHER },
      undefined,
      { type: "function", name: "w", description: "d", parameters: WEATHER, strict: false },
    ],
    [
      "no strict, no parameters: not strict (the empty schema it stands for is open)",
      { type: "function", name: "w" },
      undefined,
      { type: "function", name: "w", description: null, parameters: null, strict: false },
    ],
    [
      "strict: false as said",
      { type: "function", name: "w", parameters: CLOSED, strict: false },
      false,
      { type: "function", name: "w", description: null, parameters: CLOSED, strict: false },
    ],
  ])("%s", (_, t, toCarrier, echoed) => {
    const { chat, echo } = chatFromResponses({ model: "m/x", input: "hi", tools: [t] });
    expect((chat.tools as Json[])[0]!.function.strict).toBe(toCarrier);
    expect(responseObject(facts(echo), { status: "completed", output: [], usage: null, completedAt: 1 }).tools).toEqual([echoed]);
  });

  it("a nested object must be closed and fully required too", () => {
    const nested = {
      type: "object",
      properties: { a: { type: "object", properties: { b: { type: "string" } } } },
      required: ["a"],
      additionalProperties: false,
    };
    expect(
      (chatFromResponses({ model: "m/x", input: "hi", tools: [{ type: "function", name: "w", parameters: nested }] }).chat.tools as Json[])[0]!.function.strict,
    ).toBe(undefined);
  });
});

describe("raw reasoning as the reasoning item's content (reasoning_text)", () => {
  it("an answer whose reasoning came as bare text: content reasoning_text, no summary", async () => {
    const out = (await openAiResponses.answer(
      { choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "4", reasoning: "2+2 is 4" } }] },
      billed,
      facts(),
    )) as Json;
    expect(out.output[0]).toEqual({
      type: "reasoning",
      id: "rs_abc_0",
      summary: [],
      content: [{ type: "reasoning_text", text: "2+2 is 4" }],
      status: "completed",
    });
  });

  it("bare reasoning with only an encrypted detail beside it is still raw (the detail carries no text)", async () => {
    const message = { role: "assistant", content: "4", reasoning: "2+2", reasoning_details: [{ type: "reasoning.encrypted", data: "E", index: 0 }] };
    const out = (await openAiResponses.answer({ choices: [{ index: 0, finish_reason: "stop", message }] }, billed, facts())) as Json;
    expect(out.output[0]).toMatchObject({ summary: [], content: [{ type: "reasoning_text", text: "2+2" }] });
  });

  it("reasoning the carrier described with details (Anthropic's, Gemini's summarized thinking) stays the summary", async () => {
    const message = {
      role: "assistant",
      content: "4",
      reasoning: "sum",
      reasoning_details: [{ type: "reasoning.text", text: "sum", signature: "S", index: 0 }],
    };
    const out = (await openAiResponses.answer({ choices: [{ index: 0, finish_reason: "stop", message }] }, billed, facts())) as Json;
    expect(out.output[0]).toEqual({ type: "reasoning", id: "rs_abc_0", summary: [{ type: "summary_text", text: "sum" }], status: "completed" });
  });

  it("a stream of bare reasoning: content_part.added, reasoning_text.delta/.done, content_part.done, the item with its content", () => {
    const s = accounted(responsesStream(facts()), endpoint);
    let text = "";
    for (const c of [chunk({ reasoning: "2+2" }), chunk({ reasoning: " is 4" }), chunk({ content: "4" }), chunk({}, "stop")]) text += s.rewrite(c) as string;
    text += s.end(null);
    const ev = events(text);
    expect(ev.map(([n]) => n).slice(0, 8)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
    ]);
    const at = { item_id: "rs_abc_0", output_index: 0, content_index: 0 };
    expect(ev[3]![1]).toMatchObject({ ...at, part: { type: "reasoning_text", text: "" } });
    expect(ev[4]![1]).toMatchObject({ ...at, delta: "2+2" });
    expect(ev[6]![1]).toMatchObject({ ...at, text: "2+2 is 4" });
    expect(ev[7]![1]).toMatchObject({ ...at, part: { type: "reasoning_text", text: "2+2 is 4" } });
    expect(ev[8]).toEqual([
      "response.output_item.done",
      expect.objectContaining({
        item: { type: "reasoning", id: "rs_abc_0", summary: [], content: [{ type: "reasoning_text", text: "2+2 is 4" }], status: "completed" },
      }),
    ]);
    const done = ev.at(-1)![1].response as Json;
    expect(done.output[0].content).toEqual([{ type: "reasoning_text", text: "2+2 is 4" }]);
  });
});

describe("errors carry OpenAI's type and param", () => {
  it.each<[number, string, string, string | null]>([
    [400, "input.0: a compaction item has no equivalent here.", "invalid_request_error", "input.0"],
    [400, "store: this router keeps no responses.", "invalid_request_error", "store"],
    [400, "Unsupported fields for /responses: conversation, prompt.", "invalid_request_error", "conversation"],
    [401, "Missing Authentication header", "authentication_error", null],
    [402, "Insufficient credits for m/x: the balance is at or below zero.", "insufficient_quota", null],
    [404, "Model x is not in the catalog", "not_found_error", null],
    [429, "Rate limit exceeded", "rate_limit_error", null],
    [502, "All carriers failed", "server_error", null],
  ])("%i %s", (status, message, type, param) => {
    expect(openAiResponses.errorBody(new ApiError(status as never, message))).toEqual({ error: { code: status, message, type, param } });
  });

  it("metadata stays", () => {
    expect(openAiResponses.errorBody(new ApiError(402, "x", { limit_source: "credits" }))).toMatchObject({
      error: { type: "insufficient_quota", metadata: { limit_source: "credits" } },
    });
  });

  it("a stream that fails: response.failed's error has OpenAI's code, type and param", () => {
    const s = accounted(responsesStream(facts()), endpoint);
    s.rewrite(chunk({ content: "a" }));
    const failed = events(s.end({ status: 502, message: "the carrier failed" })).at(-1)!;
    expect(failed[0]).toBe("response.failed");
    expect(failed[1].response.error).toEqual({ code: "server_error", message: "the carrier failed", type: "server_error", param: null });
  });
});
