import { describe, it, expect, beforeAll, afterAll } from "vitest";
import OpenAI from "openai";
import Ajv2020 from "ajv/dist/2020.js";
import type { ErrorObject } from "ajv";
import schema from "./fixtures/responses-schema.json";
import { startServiceFixture, newAccount, type ServiceFixture } from "./service-fixture";

// The Responses API's conformance, after Open Responses' compliance checks (github.com/openresponses/
// openresponses, src/lib/compliance-tests.ts: basic, system prompt, multi-turn, tool calling, streaming
// and streaming tool calls; each response validated against its ResponseResource schema, each stream's
// events against its event schemas) plus reasoning answers: over real HTTP, driven by the openai SDK,
// on each carrier protocol — an OpenAI chat carrier, an open model on an OpenAI-compatible one,
// Anthropic, Gemini, OpenAI's Responses API — stream and not. Every response body and every stream event is validated against
// the checked-in schema subset (./fixtures/responses-schema.json, which cites its sources); error bodies
// of /responses against OpenAI's error shape (type and param included).
type Json = Record<string, any>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(schema);
const validator = (def: string) => ajv.getSchema(`switchyard:responses-schema#/$defs/${def}`)!;
const validateResponse = validator("ResponseResource");
const validateEvent = validator("StreamEvent");
const validateError = validator("ErrorBody");

/** The schema's complaints about `value`, as readable lines (empty when it conforms). */
function violations(validate: ReturnType<typeof validator>, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors as ErrorObject[]).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
}

let f: ServiceFixture;
let key: string;

beforeAll(async () => {
  f = await startServiceFixture("responses-conformance");
  key = (await newAccount(f, 10)).key;
});

afterAll(async () => {
  await f?.stop();
});

const client = (apiKey = key) => new OpenAI({ apiKey, baseURL: `${f.url}/api/v1`, maxRetries: 0, timeout: 30_000 });
/** Open Responses' tool-calling check's tool, as it sends it: no `strict`, an open schema. */
const WEATHER = {
  type: "function" as const,
  name: "get_weather",
  description: "Get the current weather for a location",
  parameters: {
    type: "object",
    properties: { location: { type: "string", description: "The city and state, e.g. San Francisco, CA" } },
    required: ["location"],
  },
} as unknown as OpenAI.Responses.FunctionTool;

type Case = { name: string; body: Json; expect: (r: Json) => void };
const hasType = (type: string) => (r: Json) => expect(r.output.map((i: Json) => i.type)).toContain(type);
const completed = (r: Json) => expect(r.status).toBe("completed");
const CASES: Case[] = [
  {
    name: "basic text",
    body: { input: [{ type: "message", role: "user", content: "Say hello in exactly 3 words. [sim tokens=3]" }] },
    expect: hasType("message"),
  },
  {
    name: "system prompt",
    body: {
      input: [
        { type: "message", role: "system", content: "You are a pirate." },
        { type: "message", role: "user", content: "Say hello. [sim tokens=4]" },
      ],
    },
    expect: hasType("message"),
  },
  {
    name: "multi-turn",
    body: {
      input: [
        { type: "message", role: "user", content: "My name is Alice." },
        { type: "message", role: "assistant", content: "Hello Alice!" },
        { type: "message", role: "user", content: "What is my name? [sim tokens=3]" },
      ],
    },
    expect: hasType("message"),
  },
  {
    name: "a history that opens with the assistant",
    body: {
      input: [
        { type: "message", role: "assistant", content: "How can I help?" },
        { type: "message", role: "user", content: "Say hi. [sim tokens=2]" },
      ],
    },
    expect: hasType("message"),
  },
  {
    name: "tool calling",
    body: { input: "What's the weather like in San Francisco? [sim tool_call tokens=6]", tools: [WEATHER] },
    expect: (r) => {
      hasType("function_call")(r);
      expect(r.tools[0]).toMatchObject({ type: "function", name: "get_weather", strict: false });
    },
  },
  {
    name: "every sampling field echoed",
    body: { input: "Hi [sim tokens=2]", temperature: 0.3, top_p: 0.8, max_output_tokens: 400, metadata: { run: "conformance" } },
    expect: (r) => expect(r).toMatchObject({ temperature: 0.3, top_p: 0.8, max_output_tokens: 400, metadata: { run: "conformance" }, service_tier: "default" }),
  },
];

const CARRIERS: Array<[model: string, carrier: string, reasoningModel: string]> = [
  ["openai/gpt-5-mini", "OpenAI", "openai/gpt-5-mini"],
  ["meta-llama/llama-3.1-8b-instruct", "an OpenAI-compatible carrier", "openai/gpt-oss-20b"],
  ["anthropic/claude-haiku-4.5", "Anthropic", "anthropic/claude-haiku-4.5"],
  ["google/gemini-2.5-flash", "Gemini", "google/gemini-2.5-flash"],
  ["openai/gpt-6.1-sol", "OpenAI Responses", "openai/gpt-6.1-sol"],
];

/** A stream's events, each validated; the order checks of a Responses stream; its final response. */
async function streamed(body: Json): Promise<{ final: Json; events: Json[]; errors: string[] }> {
  const events: Json[] = [];
  for await (const e of await client().responses.create({ ...body, stream: true } as OpenAI.Responses.ResponseCreateParamsStreaming)) events.push(e as Json);
  const errors = events.flatMap((e, i) => violations(validateEvent, e).map((v) => `event ${i} (${String(e.type)}): ${v}`));
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(events[0]!.type).toBe("response.created");
  const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index);
  const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.output_index);
  expect(done).toEqual(added);
  return { final: events.at(-1)!.response as Json, events, errors };
}

describe.each(CARRIERS)("/responses conforms on %s (%s)", (model, _carrier, reasoningModel) => {
  describe.each(CASES)("$name", ({ body, expect: check }) => {
    it("not streamed: the response validates", async () => {
      const r = (await client().responses.create({ model, ...body } as OpenAI.Responses.ResponseCreateParamsNonStreaming)) as unknown as Json;
      expect(violations(validateResponse, r)).toEqual([]);
      completed(r);
      check(r);
    });

    it("streamed: every event validates, and the final response", async () => {
      const { final, events, errors } = await streamed({ model, ...body });
      expect(errors).toEqual([]);
      expect(events.at(-1)!.type).toBe("response.completed");
      expect(violations(validateResponse, final)).toEqual([]);
      check(final);
    });
  });

  it.each([false, true])(`reasoning on ${reasoningModel} (stream: %s): the reasoning item and every event validate`, async (stream) => {
    const body = { model: reasoningModel, input: "Think, then answer [sim tokens=4]", reasoning: { effort: "low" }, max_output_tokens: 4000 };
    const r = stream
      ? await streamed(body).then(({ final, errors }) => (expect(errors).toEqual([]), final))
      : ((await client().responses.create(body as OpenAI.Responses.ResponseCreateParamsNonStreaming)) as unknown as Json);
    expect(violations(validateResponse, r)).toEqual([]);
    completed(r);
    hasType("reasoning")(r);
    expect(r.reasoning).toEqual({ effort: "low", summary: null });
  });
});

describe("raw reasoning (an open model's chain of thought) comes back as reasoning_text content", () => {
  it.each([false, true])("stream: %s", async (stream) => {
    const body = { model: "openai/gpt-oss-20b", input: "Think [sim tokens=4]", reasoning: { effort: "low" } };
    let r: Json;
    if (stream) {
      const { final, events, errors } = await streamed(body);
      expect(errors).toEqual([]);
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["response.reasoning_text.delta", "response.reasoning_text.done"]));
      r = final;
    } else r = (await client().responses.create(body as OpenAI.Responses.ResponseCreateParamsNonStreaming)) as unknown as Json;
    const reasoning = r.output.find((i: Json) => i.type === "reasoning");
    expect(reasoning.summary).toEqual([]);
    expect(reasoning.content).toEqual([{ type: "reasoning_text", text: expect.stringMatching(/\S/) }]);
  });
});

describe("errors on /responses in OpenAI's shape: type and param, as the openai SDK reads them", () => {
  const raw = (path: string, body: unknown, auth = `Bearer ${key}`) =>
    fetch(`${f.url}/api/v1${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: auth }, body: JSON.stringify(body) });

  it.each<[string, () => Promise<Response>, number, string, string | null]>([
    ["a refused field", () => raw("/responses", { model: "openai/gpt-5-mini", input: "x", store: true }), 400, "invalid_request_error", "store"],
    [
      "a bad input item",
      () => raw("/responses", { model: "openai/gpt-5-mini", input: [{ type: "compaction", encrypted_content: "x" }] }),
      400,
      "invalid_request_error",
      "input.0",
    ],
    ["no key", () => raw("/responses", { model: "openai/gpt-5-mini", input: "x" }, "Bearer nope"), 401, "authentication_error", null],
    [
      "POST /responses/compact: stateless, a documented 400",
      () => raw("/responses/compact", { model: "openai/gpt-5-mini", input: "x" }),
      400,
      "invalid_request_error",
      null,
    ],
    [
      "a stored response asked for",
      () => fetch(`${f.url}/api/v1/responses/resp_x`, { headers: { authorization: `Bearer ${key}` } }),
      404,
      "not_found_error",
      null,
    ],
  ])("%s", async (_, call, status, type, param) => {
    const res = await call();
    expect(res.status).toBe(status);
    const body = (await res.json()) as Json;
    expect(violations(validateError, body)).toEqual([]);
    expect(body.error).toMatchObject({ type, param });
  });

  it("the SDK's APIError carries them (402 when the account cannot pay)", async () => {
    const { key: poor } = await newAccount(f, 0);
    const err = (await client(poor)
      .responses.create({ model: "openai/gpt-5-mini", input: "x" })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(402);
    expect(err.type).toBe("insufficient_quota");
    expect(err.param).toBeNull();
    expect(err.message).toMatch(/the balance is at or below zero/);
  });

  it("POST /responses/compact through the SDK: a 400 saying the router is stateless, never a 404", async () => {
    const err = (await client()
      .responses.compact({ model: "openai/gpt-5-mini", input: "x" } as never)
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(/stateless/);
  });
});
