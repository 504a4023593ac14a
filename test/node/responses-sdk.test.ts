import { describe, it, expect, beforeAll, afterAll } from "vitest";
import OpenAI from "openai";
import { startServiceFixture, newAccount, type ServiceFixture } from "./service-fixture";

// POST /api/v1/responses driven by the official openai SDK, unchanged (baseURL `<origin>/api/v1`), over real
// HTTP against the service started as `npm start` starts it: every catalog model, whatever its carrier speaks.
let f: ServiceFixture;
let key: string;

beforeAll(async () => {
  f = await startServiceFixture("responses");
  key = (await newAccount(f, 10)).key;
});

afterAll(async () => {
  await f?.stop();
});

const client = (apiKey = key) => new OpenAI({ apiKey, baseURL: `${f.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
const TOOL = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

/** The event kinds OpenAI documents for a Responses stream of text, function calls, reasoning summaries and raw reasoning text. */
const DOCUMENTED = new Set([
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.output_item.done",
  "response.content_part.added",
  "response.content_part.done",
  "response.output_text.delta",
  "response.output_text.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.reasoning_summary_part.added",
  "response.reasoning_summary_part.done",
  "response.reasoning_summary_text.delta",
  "response.reasoning_summary_text.done",
  "response.reasoning_text.delta",
  "response.reasoning_text.done",
  "response.completed",
  "response.incomplete",
  "response.failed",
]);

async function events(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>) {
  const all: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const e of stream) all.push(e);
  return all;
}

describe.each([
  ["anthropic/claude-haiku-4.5", "an Anthropic carrier"],
  ["google/gemini-2.5-flash", "a Gemini carrier"],
  ["openai/gpt-5-mini", "OpenAI"],
  ["meta-llama/llama-3.1-8b-instruct", "an OpenAI-compatible carrier"],
])("the openai SDK's responses on %s (%s)", (model) => {
  it("responses.create: output_text, status, usage, the request echoed, X-Generation-Id", async () => {
    const { data: response, response: raw } = await client()
      .responses.create({ model, instructions: "Be terse.", input: "Say hi [sim tokens=5]", max_output_tokens: 300, temperature: 0.5 })
      .withResponse();
    expect(response.object).toBe("response");
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe("completed");
    expect(response.model).toBe(model);
    expect(response.instructions).toBe("Be terse.");
    expect(response.temperature).toBe(0.5);
    expect(response.output_text.trim().length).toBeGreaterThan(0);
    const message = response.output.find((i) => i.type === "message") as OpenAI.Responses.ResponseOutputMessage;
    expect(message.content[0]).toMatchObject({ type: "output_text", text: response.output_text });
    expect(response.usage!.output_tokens).toBeGreaterThanOrEqual(5);
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBeLessThanOrEqual(response.usage!.output_tokens);
    expect(response.usage!.input_tokens).toBeGreaterThan(0);
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    expect(raw.headers.get("x-generation-id")).toMatch(/^gen-/);
  });

  it("a stream: only documented events, rising sequence numbers, the text assembled equals the final response's", async () => {
    const all = await events(await client().responses.create({ model, input: "Stream it [sim tokens=12]", stream: true }));
    expect(all.map((e) => e.type).filter((t) => !DOCUMENTED.has(t))).toEqual([]);
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all[0]!.type).toBe("response.created");
    expect(all[1]!.type).toBe("response.in_progress");
    const last = all.at(-1)!;
    expect(last.type).toBe("response.completed");
    const final = (last as OpenAI.Responses.ResponseCompletedEvent).response;
    const deltas = all.filter((e) => e.type === "response.output_text.delta").map((e) => (e as OpenAI.Responses.ResponseTextDeltaEvent).delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(final.output_text).toBe(deltas.join(""));
    expect(final.usage!.output_tokens).toBeGreaterThanOrEqual(12);
    // Every item added is done, in order, at its index.
    const added = all.filter((e) => e.type === "response.output_item.added").map((e) => (e as OpenAI.Responses.ResponseOutputItemAddedEvent).output_index);
    const done = all.filter((e) => e.type === "response.output_item.done").map((e) => (e as OpenAI.Responses.ResponseOutputItemDoneEvent).output_index);
    expect(done).toEqual(added);
    expect(added).toEqual(final.output.map((_, i) => i));
  });

  it("a function-calling round trip: function_call with call_id, then its output with the user's next words", async () => {
    const first = await client().responses.create({ model, tools: [TOOL], input: "Weather in Paris? [sim tool_call tokens=6]" });
    const call = first.output.find((i) => i.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.name).toBe("get_weather");
    expect(call.call_id).toBeTruthy();
    expect(() => JSON.parse(call.arguments)).not.toThrow();
    const second = await client().responses.create({
      model,
      tools: [TOOL],
      input: [
        { role: "user", content: "Weather in Paris?" },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output", call_id: call.call_id, output: '{"temp":18}' },
        { role: "user", content: [{ type: "input_text", text: "And tomorrow? [sim tokens=4]" }] },
      ],
    });
    expect(second.status).toBe("completed");
    expect(second.output_text.length).toBeGreaterThan(0);
  });

  it("a streamed function call: arguments deltas add up to the done event and the final item", async () => {
    const all = await events(await client().responses.create({ model, tools: [TOOL], input: "Look [sim tool_call tokens=6]", stream: true }));
    const args = all
      .filter((e) => e.type === "response.function_call_arguments.delta")
      .map((e) => (e as OpenAI.Responses.ResponseFunctionCallArgumentsDeltaEvent).delta)
      .join("");
    const done = all.find((e) => e.type === "response.function_call_arguments.done") as OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent;
    expect(done.arguments).toBe(args);
    const final = (all.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
    expect(final.output.find((i) => i.type === "function_call")).toMatchObject({ arguments: args, status: "completed" });
  });
});

describe("reasoning through /responses", () => {
  it.each([false, true])("Claude's signed thinking goes back byte for byte in encrypted_content (stream: %s)", async (stream) => {
    const request = {
      model: "anthropic/claude-sonnet-4.5",
      input: "Think first [sim tokens=6]",
      reasoning: { effort: "low" as const, summary: "auto" as const },
      include: ["reasoning.encrypted_content" as const],
      max_output_tokens: 4000,
    };
    const first = stream
      ? ((await events(await client().responses.create({ ...request, stream: true }))).at(-1) as OpenAI.Responses.ResponseCompletedEvent).response
      : await client().responses.create(request);
    const reasoning = first.output.find((i) => i.type === "reasoning") as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary[0]!.text.length).toBeGreaterThan(0);
    expect(reasoning.encrypted_content).toMatch(/^swy2\.[A-Za-z0-9_-]+$/); // sealed: src/serve/reasoning-sealer.ts
    // The simulated Anthropic refuses a thinking block whose signature does not match its text: this passes only if it came back intact.
    const second = await client().responses.create({
      ...request,
      input: [
        { role: "user", content: "Think first" },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { role: "user", content: "Go on [sim tokens=3]" },
      ],
    });
    expect(second.status).toBe("completed");
  });

  it("without include, no encrypted_content is sent", async () => {
    const response = await client().responses.create({
      model: "anthropic/claude-sonnet-4.5",
      input: "Think [sim tokens=3]",
      reasoning: { effort: "low" },
      max_output_tokens: 4000,
    });
    const reasoning = response.output.find((i) => i.type === "reasoning") as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.encrypted_content ?? null).toBeNull();
  });
});

describe("refusals in OpenAI's error shape", () => {
  it.each([
    ["store: true", { store: true }, /stateless/],
    ["previous_response_id", { previous_response_id: "resp_x" }, /previous_response_id/],
    [
      "a built-in tool under provider.require_parameters",
      { tools: [{ type: "web_search" }], provider: { require_parameters: true } },
      /tools\.0: web_search tools/,
    ],
    ["an unknown field", { conversation: "c1" }, /Unsupported field for \/responses: conversation/],
    ["an include we cannot produce", { include: ["file_search_call.results"] }, /include: file_search_call\.results/],
  ])("%s → 400", async (_name, extra, message) => {
    const err = (await client()
      .responses.create({ model: "openai/gpt-5-mini", input: "x", ...(extra as object) })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(message);
  });

  it("a carrier failure mid-stream ends with response.failed", async () => {
    const all = await events(
      await client().responses.create({ model: "meta-llama/llama-3.1-8b-instruct", input: "x [sim tokens=30 reset_after=5]", stream: true }),
    );
    const last = all.at(-1) as OpenAI.Responses.ResponseFailedEvent;
    expect(last.type).toBe("response.failed");
    expect(last.response.status).toBe("failed");
    expect(last.response.error?.message).toMatch(/mid-stream|lost/);
  });

  it("402 when the account cannot pay", async () => {
    const { key: poor } = await newAccount(f, 0);
    const err = (await client(poor)
      .responses.create({ model: "openai/gpt-5-mini", input: "x" })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(402);
  });
});
