import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";

// POST /api/v1/messages driven by the official Anthropic SDK, unchanged (baseURL `<origin>/api`), over real
// HTTP against the service started as `npm start` starts it: every catalog model, whatever its carrier speaks.
let service: LocalService;
let admin: AdminClient;
let state: string;
let key: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-anthropic-"));
  service = await startLocalService({ port: 0, persistTo: join(state, "wrangler"), quiet: true });
  admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
  const account = await admin.request<{ id: string }>("POST", "/accounts", { email: `sdk-${Date.now()}@example.test`, credits: 10 });
  key = (await admin.request<{ key: string }>("POST", "/keys", { account: account.id })).key;
});

afterAll(async () => {
  await service?.stop();
  rmSync(state, { recursive: true, force: true });
});

const client = (apiKey = key) => new Anthropic({ apiKey, baseURL: `${service.url}/api`, maxRetries: 0, timeout: 20_000 });
const TOOL = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe.each([
  ["anthropic/claude-haiku-4.5", "an Anthropic carrier"],
  ["google/gemini-2.5-flash", "a Gemini carrier"],
  ["meta-llama/llama-3.1-8b-instruct", "an OpenAI-compatible carrier"],
])("the Anthropic SDK on %s (%s)", (model) => {
  it("messages.create: a message with text, stop_reason and usage, X-Generation-Id", async () => {
    const { data: message, response } = await client()
      .messages.create({ model, max_tokens: 200, system: "Be terse.", messages: [{ role: "user", content: "Say hi [sim tokens=5]" }] })
      .withResponse();
    expect(message.type).toBe("message");
    expect(message.id).toMatch(/^msg_/);
    expect(message.model).toBe(model);
    expect(message.stop_reason).toBe("end_turn");
    const text = message.content
      .filter((b) => b.type === "text")
      .map((b) => (b as Anthropic.TextBlock).text)
      .join("");
    expect(text.trim().split(/\s+/).length).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBe(5);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-generation-id")).toMatch(/^gen-/);
  });

  it("messages.stream: the SDK assembles the final message from our events", async () => {
    const stream = client().messages.stream({ model, max_tokens: 200, messages: [{ role: "user", content: "Stream it [sim tokens=12]" }] });
    let deltas = 0;
    stream.on("text", () => deltas++);
    const message = await stream.finalMessage();
    expect(deltas).toBeGreaterThan(1);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBe(12);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.content[0]!.type).toBe("text");
  });

  it("a tool round trip: tool_use, then the tool_result with the user's text beside it", async () => {
    const first = await client().messages.create({
      model,
      max_tokens: 200,
      tools: [TOOL],
      messages: [{ role: "user", content: "Weather in Paris? [sim tool_call tokens=6]" }],
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(use.name).toBe("get_weather");
    const second = await client().messages.create({
      model,
      max_tokens: 200,
      tools: [TOOL],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: use.id, content: '{"temp":18}' },
            { type: "text", text: "And tomorrow? [sim tokens=4]" },
          ],
        },
      ],
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.usage.output_tokens).toBe(4);
  });

  it("a streamed tool call: the SDK's input_json accumulates into the tool_use input", async () => {
    const stream = client().messages.stream({ model, max_tokens: 200, tools: [TOOL], messages: [{ role: "user", content: "Look [sim tool_call tokens=6]" }] });
    const message = await stream.finalMessage();
    const use = message.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(use.input).toHaveProperty("query");
    expect(message.stop_reason).toBe("tool_use");
  });

  it("count_tokens: the carrier's exact count on an Anthropic model, our estimate on the others (X-Token-Count says which)", async () => {
    const { data: counted, response } = await client()
      .messages.countTokens({ model, messages: [{ role: "user", content: "How many tokens is this?" }] })
      .withResponse();
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-token-count")).toBe(model.startsWith("anthropic/") ? "exact" : "estimate");
  });
});

describe("errors reach the Anthropic SDK as its own error classes", () => {
  it.each([
    [
      "an unknown key",
      () =>
        client("sk-or-v1-" + "0".repeat(64)).messages.create({
          model: "anthropic/claude-haiku-4.5",
          max_tokens: 10,
          messages: [{ role: "user", content: "x" }],
        }),
      Anthropic.AuthenticationError,
    ],
    [
      "a bad request",
      () => client().messages.create({ model: "anthropic/claude-haiku-4.5", max_tokens: 10, messages: "nope" as never }),
      Anthropic.BadRequestError,
    ],
    [
      "an unknown model",
      () => client().messages.create({ model: "nobody/nothing", max_tokens: 10, messages: [{ role: "user", content: "x" }] }),
      Anthropic.BadRequestError,
    ],
    [
      "a carrier rate limit",
      () => client().messages.create({ model: "anthropic/claude-haiku-4.5", max_tokens: 10, messages: [{ role: "user", content: "x [sim status=429]" }] }),
      Anthropic.RateLimitError,
    ],
  ])("%s", async (_name, call, errorClass) => {
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errorClass);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: "error",
      error: { type: expect.any(String), message: expect.any(String) },
    });
  });

  it("402 when the account cannot pay: a billing_error naming the credits page", async () => {
    const account = await admin.request<{ id: string }>("POST", "/accounts", { email: `poor-${Date.now()}@example.test`, credits: 0 });
    const poor = (await admin.request<{ key: string }>("POST", "/keys", { account: account.id })).key;
    const err = (await client(poor)
      .messages.create({ model: "anthropic/claude-haiku-4.5", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(402);
    expect(err.error).toMatchObject({ type: "error", error: { type: "billing_error", message: expect.stringMatching(/credits/) } });
  });
});

describe("the Anthropic SDK at a wrong base URL", () => {
  it("<origin>/api/v1 (it adds /v1/messages itself): BadRequestError naming the base URL meant", async () => {
    const wrong = new Anthropic({ apiKey: key, baseURL: `${service.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
    const err = await wrong.messages
      .create({ model: "anthropic/claude-haiku-4.5", max_tokens: 16, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    // A 400 rather than a 404: Claude Code, on this same SDK, shows its own "model may not exist" for any 404.
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).toContain(
      `No route at POST /api/v1/v1/messages: did you mean POST /api/v1/messages? Anthropic's clients add /v1/messages to their base URL themselves, so it is ${service.url}/api (Claude Code: ANTHROPIC_BASE_URL=${service.url}/api).`,
    );
  });
});
