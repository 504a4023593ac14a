import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastUserText, parseDirectives } from "../../simulator/directives";
import { defaultProfile, FIRST_BYTE_MS_RANGE, TPS_RANGE } from "../../simulator/profiles";
import { startSimulator, type RequestRecord, type Simulator } from "../../simulator/server";
import { argumentFragments, countPromptTokens, countRequestTokens, countTokens, tokenize } from "../../simulator/tokens";

type Json = Record<string, unknown>;

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: { reasoning_tokens: number };
}

interface Completion {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    message: {
      role: string;
      content: string;
      reasoning?: string;
      reasoning_content?: string;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    };
    finish_reason: string;
  }[];
  usage?: Usage;
}

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: string;
      content?: string;
      reasoning?: string;
      reasoning_content?: string;
      tool_calls?: { index: number; id?: string; type?: string; function: { name?: string; arguments: string } }[];
    };
    finish_reason: string | null;
  }[];
  usage?: Usage;
}

interface ErrorBody {
  error: { message: string; type: string; code: number };
}

const REASONING_UPSTREAM = "acme-r1-upstream";
const PLAIN = "plain-upstream";

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sim-test-"));
  const catalog = {
    models: [
      {
        id: "acme/r1",
        image_tokens: 300,
        file_tokens: 2000,
        audio_tokens: 700,
        video_tokens: 9000,
        endpoints: [
          { provider: "acme", upstream_model: REASONING_UPSTREAM, supports_reasoning: true },
          { provider: "beyond", upstream_model: REASONING_UPSTREAM, supports_reasoning: true, reasoning_beyond_cap: true },
          { provider: "other", upstream_model: PLAIN },
        ],
      },
    ],
  };
  writeFileSync(join(dir, "catalog.json"), JSON.stringify(catalog));
  sim = await startSimulator({ catalogPath: join(dir, "catalog.json") });
});

afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

function userBody(text: string, extra: Json = {}): Json {
  return { model: PLAIN, messages: [{ role: "user", content: text }], ...extra };
}

function chat(carrier: string, body: Json | string, init: { signal?: AbortSignal; headers?: Record<string, string>; base?: string } = {}) {
  return fetch(`${init.base ?? sim.url}/${carrier}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal ?? AbortSignal.timeout(5000),
  });
}

async function chatJson(carrier: string, body: Json): Promise<Completion> {
  const res = await chat(carrier, body);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json");
  return (await res.json()) as Completion;
}

/** The `data:` payloads of an SSE body, in order (junk lines and comments are skipped). */
function sseData(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice("data: ".length));
}

async function chatStream(carrier: string, body: Json): Promise<{ raw: string; data: string[]; chunks: Chunk[] }> {
  const res = await chat(carrier, { ...body, stream: true });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const raw = await res.text();
  const data = sseData(raw);
  expect(data.at(-1)).toBe("[DONE]");
  const chunks = data.slice(0, -1).flatMap((d) => {
    try {
      return [JSON.parse(d) as Chunk];
    } catch {
      return [];
    }
  });
  return { raw, data, chunks };
}

/** A directive's `args=` value: base64url of the JSON, without padding. */
function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function words(text: string): string[] {
  return text.split(" ").slice(1); // every word carries its leading space
}

/** The log for `tag`, once every match is final (or has outcome `until`), or after `waitMs`. */
async function records(tag: string, opts: { until?: string; waitMs?: number } = {}): Promise<RequestRecord[]> {
  const until = opts.until === undefined ? "" : `&until=${opts.until}`;
  const res = await fetch(`${sim.url}/__sim/requests?tag=${encodeURIComponent(tag)}&wait_ms=${opts.waitMs ?? 3000}${until}`, {
    signal: AbortSignal.timeout(5000),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { requests: RequestRecord[] }).requests;
}

describe("tokens", () => {
  it("splits words and single symbols", () => {
    expect(tokenize("Hello, world!  a_b=3")).toEqual(["Hello", ",", "world", "!", "a_b", "=", "3"]);
    expect(tokenize("   ")).toEqual([]);
  });

  it("counts prompt tokens with 4 per message, joined text parts and a fixed count per image", () => {
    const parts = [
      { type: "text", text: "a b" },
      { type: "image_url", image_url: { url: "x" } },
      { type: "text", text: "c" },
    ];
    expect(
      countPromptTokens([
        { role: "user", content: "Hi!" },
        { role: "user", content: parts },
        { role: "assistant", content: null },
      ]),
    ).toBe(2 + 4 + 3 + 1600 + 4 + 0 + 4);
    expect(countPromptTokens([{ role: "user", content: parts }], { image: 250 })).toBe(3 + 250 + 4);
  });

  it("counts tool results, earlier tool calls, tools, an object tool_choice and response_format", () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
    const responseFormat = { type: "json_schema", json_schema: { name: "w", schema: { type: "object" } } };
    const messages = [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "rain, 4 C" },
    ];
    const base = 2 + 4 + (1 + 9) + 4 + 4 + 4; // "Weather ?", the call's name and arguments, "rain , 4 C"
    expect(countPromptTokens(messages)).toBe(base);
    const body = { messages, tools, tool_choice: { type: "function", function: { name: "get_weather" } }, response_format: responseFormat };
    expect(countRequestTokens(body)).toBe(
      base + countTokens(JSON.stringify(tools)) + countTokens(JSON.stringify(body.tool_choice)) + countTokens(JSON.stringify(responseFormat)),
    );
    expect(countRequestTokens({ messages, tool_choice: "auto" })).toBe(base);
  });
});

const NO_DIRECTIVES = {
  hang: false,
  noUsage: false,
  malformed: false,
  garbage: false,
  linger: false,
  providerField: false,
  reasoningContent: false,
  toolCall: false,
  noFinish: false,
};

describe("directives", () => {
  it("defaults when there is no directive", () => {
    expect(parseDirectives("just text [simulate this]", "a")).toEqual(NO_DIRECTIVES);
  });

  it("parses every flag and key=value", () => {
    const d = parseDirectives(
      "x [sim hang no_usage malformed garbage linger provider_field reasoning_content tool_call no_finish] y [sim status=503 reset_after=2 delay_ms=10 tokens=7 tps=2.5 big=100 tag=t-1 cap_field=max_tokens]",
      "a",
    );
    expect(d).toEqual({
      hang: true,
      noUsage: true,
      malformed: true,
      garbage: true,
      linger: true,
      providerField: true,
      reasoningContent: true,
      toolCall: true,
      noFinish: true,
      status: 503,
      resetAfter: 2,
      delayMs: 10,
      tokens: 7,
      tps: 2.5,
      big: 100,
      tag: "t-1",
      capField: "max_tokens",
    });
  });

  it("applies carrier= only to that carrier, later directives overriding", () => {
    const text = "[sim carrier=a status=503] [sim carrier=b status=429 hang] [sim tokens=3] [sim tokens=4]";
    expect(parseDirectives(text, "a")).toMatchObject({ status: 503, hang: false, tokens: 4 });
    expect(parseDirectives(text, "b")).toMatchObject({ status: 429, hang: true, tokens: 4 });
    expect(parseDirectives(text, "c").status).toBeUndefined();
  });

  it("ignores unknown words and malformed values", () => {
    const d = parseDirectives("[sim frobnicate speed=9 status=99 tokens=abc tps=0 delay_ms=-5 reset_after=1.5]", "a");
    expect(d).toEqual(NO_DIRECTIVES);
  });

  it("reads only the last user message, joining text parts", () => {
    const messages = [
      { role: "user", content: "old [sim status=500]" },
      {
        role: "user",
        content: [
          { type: "text", text: "new" },
          { type: "text", text: "[sim tokens=2]" },
        ],
      },
      { role: "assistant", content: "[sim hang]" },
    ];
    expect(lastUserText(messages)).toBe("new\n[sim tokens=2]");
    expect(lastUserText([{ role: "system", content: "x" }])).toBe("");
  });

  it("reads a named tool call: tool_call=<name> and args=<base64url of a JSON object>, padded or not", () => {
    const args = { file_path: "/x/a b.txt", content: "line 1\nline 2 é ü" };
    const encoded = b64url(args);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(parseDirectives(`do it [sim tool_call=Write args=${encoded}]`, "a")).toEqual({ ...NO_DIRECTIVES, toolCallName: "Write", toolCallArgs: args });
    const padded = Buffer.from(JSON.stringify({ a: 1 })).toString("base64url") + "=";
    expect(parseDirectives(`[sim args=${padded} tool_call=f]`, "a")).toMatchObject({ toolCallName: "f", toolCallArgs: { a: 1 } });
    // Not base64url, not JSON, not an object: null, so the call is refused rather than made with other arguments.
    for (const bad of ["a+b/", b64url([1, 2]), Buffer.from("not json").toString("base64url"), b64url("s")])
      expect(parseDirectives(`[sim tool_call=f args=${bad}]`, "a").toolCallArgs).toBeNull();
    expect(parseDirectives("[sim tool_call=f]", "a")).toEqual({ ...NO_DIRECTIVES, toolCallName: "f" });
  });

  it("splits call arguments into one-token fragments that join back to exactly the JSON", () => {
    const json = JSON.stringify({ cmd: "echo 'a  b' > out.txt", n: [1, 2.5] });
    const fragments = argumentFragments(json);
    expect(fragments.join("")).toBe(json);
    expect(fragments.length).toBe(countTokens(json));
    expect(fragments.length).toBeGreaterThan(5);
  });
});

describe("simulator routes", () => {
  it("answers /health", async () => {
    const res = await fetch(`${sim.url}/health`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("404s anything else as JSON", async () => {
    for (const [method, path] of [
      ["GET", "/nope"],
      ["GET", "/groq/v1/chat/completions"],
      ["POST", "/groq/v1/completions"],
    ] as const) {
      const res = await fetch(`${sim.url}${path}`, { method, signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(404);
      expect(((await res.json()) as ErrorBody).error.code).toBe(404);
    }
  });

  it("rejects invalid JSON with an OpenAI-style 400", async () => {
    const res = await chat("groq", "{not json");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { message: "request body is not valid JSON", type: "invalid_request_error", code: 400 },
    });
  });

  it("rejects a body without a messages array", async () => {
    const res = await chat("groq", { model: PLAIN });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.type).toBe("invalid_request_error");
  });
});

describe("non-stream completions", () => {
  it("returns an OpenAI chat.completion with exact usage", async () => {
    const body = {
      model: PLAIN,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hello, world!" },
      ],
    };
    const json = await chatJson("groq", body);
    expect(json.id).toMatch(/^chatcmpl-[0-9a-f]+$/);
    expect(json.object).toBe("chat.completion");
    expect(typeof json.created).toBe("number");
    expect(json.model).toBe(PLAIN);
    const choice = json.choices[0]!;
    expect(choice.index).toBe(0);
    expect(choice.message.role).toBe("assistant");
    expect(choice.message).not.toHaveProperty("reasoning");
    expect(choice.finish_reason).toBe("stop");
    const n = words(choice.message.content).length;
    expect(n).toBeGreaterThanOrEqual(8);
    expect(n).toBeLessThanOrEqual(32);
    // "You are terse ." = 4 and "Hello , world !" = 4, plus 4 per message.
    expect(json.usage).toEqual({ prompt_tokens: 16, completion_tokens: n, total_tokens: 16 + n });
  });

  it("is deterministic in messages and model", async () => {
    const body = userBody("Tell me about trains.");
    const a = await chatJson("groq", body);
    const b = await chatJson("other-carrier", body);
    const c = await chatJson("groq", { ...body, model: "another-model" });
    expect(b.choices[0]!.message.content).toBe(a.choices[0]!.message.content);
    expect(b.id).not.toBe(a.id);
    expect(c.choices[0]!.message.content).not.toBe(a.choices[0]!.message.content);
  });

  it("honours tokens= and caps at max_tokens / max_completion_tokens", async () => {
    const exact = await chatJson("groq", userBody("[sim tokens=5]", { max_tokens: 5 }));
    expect(words(exact.choices[0]!.message.content)).toHaveLength(5);
    expect(exact.choices[0]!.finish_reason).toBe("stop");
    const capped = await chatJson("groq", userBody("[sim tokens=20]", { max_tokens: 6 }));
    expect(words(capped.choices[0]!.message.content)).toHaveLength(6);
    expect(capped.usage!.completion_tokens).toBe(6);
    expect(capped.choices[0]!.finish_reason).toBe("length");
    const capped2 = await chatJson("groq", userBody("[sim tokens=20]", { max_completion_tokens: 7 }));
    expect(capped2.usage!.completion_tokens).toBe(7);
    expect(capped2.choices[0]!.finish_reason).toBe("length");
  });

  it("reads directives from array content parts", async () => {
    const body = {
      model: PLAIN,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Hi" },
            { type: "text", text: "[sim tokens=3]" },
          ],
        },
      ],
    };
    const json = await chatJson("groq", body);
    // "Hi" = 1, "[ sim tokens = 3 ]" = 6, plus 4.
    expect(json.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3 });
  });

  it("ignores directives outside the last user message", async () => {
    const body = {
      model: PLAIN,
      messages: [
        { role: "user", content: "[sim status=500]" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "again" },
      ],
    };
    await chatJson("groq", body);
  });

  it("omits usage with no_usage", async () => {
    const json = await chatJson("groq", userBody("[sim no_usage]"));
    expect(json).not.toHaveProperty("usage");
    expect(json.choices[0]!.message.content.length).toBeGreaterThan(0);
  });

  it("returns 200 with a non-JSON body when malformed", async () => {
    const res = await chat("groq", userBody("[sim malformed]"));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.startsWith("{")).toBe(true);
    expect(() => JSON.parse(text)).toThrow();
  });

  it("pads content to big= bytes while keeping token counts exact", async () => {
    const json = await chatJson("groq", userBody("[sim big=100000 tokens=4]"));
    const content: string = json.choices[0]!.message.content;
    expect(Buffer.byteLength(content)).toBeGreaterThanOrEqual(100_000);
    expect(words(content)).toHaveLength(4);
    expect(tokenize(content)).toHaveLength(json.usage!.completion_tokens);
  });
});

describe("reasoning models", () => {
  it("adds reasoning words and reasoning_tokens for catalog reasoning endpoints", async () => {
    const json = await chatJson("acme", { ...userBody("[sim tokens=10]"), model: REASONING_UPSTREAM });
    const message = json.choices[0]!.message;
    expect(words(message.reasoning ?? "")).toHaveLength(3); // ceil(10 / 4)
    expect(words(message.content)).toHaveLength(7);
    expect(json.usage!.completion_tokens).toBe(10);
    expect(json.usage!.completion_tokens_details).toEqual({ reasoning_tokens: 3 });
  });

  it("treats *reason* and *-thinking model ids as reasoning, others not", async () => {
    for (const model of ["deep-reasoner", "qwen-3-thinking"]) {
      const json = await chatJson("acme", { ...userBody("[sim tokens=5]"), model });
      expect(json.usage!.completion_tokens_details).toEqual({ reasoning_tokens: 2 });
    }
    const plain = await chatJson("acme", userBody("[sim tokens=5]"));
    expect(plain.usage).not.toHaveProperty("completion_tokens_details");
  });

  it("streams reasoning deltas before content deltas", async () => {
    const { chunks } = await chatStream("acme", { ...userBody("[sim tokens=8]"), model: REASONING_UPSTREAM, stream_options: { include_usage: true } });
    const kinds = chunks.slice(1, -2).map((c) => Object.keys(c.choices[0]!.delta)[0]);
    expect(kinds).toEqual(["reasoning", "reasoning", "content", "content", "content", "content", "content", "content"]);
    expect(chunks.at(-1)!.usage!.completion_tokens_details).toEqual({ reasoning_tokens: 2 });
  });

  it("has no catalog reasoning models when the catalog is missing", async () => {
    const other = await startSimulator({ catalogPath: join(dir, "missing.json") });
    try {
      const res = await chat("acme", { ...userBody("[sim tokens=4]"), model: REASONING_UPSTREAM }, { base: other.url });
      const json = (await res.json()) as Completion;
      expect(json.choices[0]!.message).not.toHaveProperty("reasoning");
      expect(json.usage).not.toHaveProperty("completion_tokens_details");
    } finally {
      await other.close();
    }
  });
});

describe("reasoning_content, tool calls, the carrier's provider field and images", () => {
  it("names the reasoning field reasoning_content with the directive, in streams and bodies", async () => {
    const { chunks } = await chatStream("acme", {
      ...userBody("[sim tokens=8 reasoning_content]"),
      model: REASONING_UPSTREAM,
      stream_options: { include_usage: true },
    });
    const kinds = chunks.slice(1, -2).map((c) => Object.keys(c.choices[0]!.delta)[0]);
    expect(kinds).toEqual(["reasoning_content", "reasoning_content", "content", "content", "content", "content", "content", "content"]);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 8, completion_tokens_details: { reasoning_tokens: 2 } });
    const json = await chatJson("acme", { ...userBody("[sim tokens=8 reasoning_content]"), model: REASONING_UPSTREAM });
    expect(words(json.choices[0]!.message.reasoning_content ?? "")).toHaveLength(2);
    expect(json.choices[0]!.message).not.toHaveProperty("reasoning");
  });

  it("streams a tool call: the name first, then one argument fragment per chunk, finish tool_calls, exact usage", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { query: { type: "string" } } } } }];
    const body = { ...userBody("[sim tokens=7 tool_call]"), tools, stream_options: { include_usage: true } };
    const { chunks } = await chatStream("groq", body);
    const calls = chunks.slice(1, -2).map((c) => c.choices[0]!.delta.tool_calls![0]!);
    expect(calls[0]).toMatchObject({ index: 0, id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_weather", arguments: "" } });
    const args = calls.slice(1).map((c) => c.function.arguments);
    expect(args).toHaveLength(7 - 1);
    expect(JSON.parse(args.join(""))).toEqual({ query: expect.any(String) });
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 7, prompt_tokens: countRequestTokens(body) });
    const json = await chatJson("groq", { ...body, stream_options: undefined });
    const message = json.choices[0]!.message;
    expect(message.content).toBeNull();
    expect(message.tool_calls![0]!.function).toEqual({ name: "get_weather", arguments: args.join("") });
    expect(json.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("calls the named tool with exactly the directive's arguments, in several deltas when streamed; usage counts each", async () => {
    const tools = [
      { type: "function", function: { name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } } },
      { type: "function", function: { name: "write_stdin", parameters: { type: "object" } } },
    ];
    const args = { cmd: "printf 'hi there' > out.txt", workdir: "/tmp/x" };
    const body = {
      ...userBody(`run it [sim tool_call=write_stdin tool_call=exec_command args=${b64url(args)}]`),
      tools,
      stream_options: { include_usage: true },
    };
    const { chunks } = await chatStream("groq", body);
    const calls = chunks.slice(1, -2).map((c) => c.choices[0]!.delta.tool_calls![0]!);
    expect(calls[0]).toMatchObject({ index: 0, id: expect.stringMatching(/^call_/), type: "function", function: { name: "exec_command", arguments: "" } });
    const fragments = calls.slice(1).map((c) => c.function.arguments);
    expect(fragments.length).toBeGreaterThan(1);
    expect(JSON.parse(fragments.join(""))).toEqual(args);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 1 + fragments.length });
    const json = await chatJson("groq", { ...body, stream_options: undefined });
    expect(json.choices[0]!.message.content).toBeNull();
    expect(json.choices[0]!.message.tool_calls![0]!.function.name).toBe("exec_command");
    expect(JSON.parse(json.choices[0]!.message.tool_calls![0]!.function.arguments)).toEqual(args);
    expect(json.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("refuses a named call of a tool the request did not declare, or without JSON-object args, as a carrier's 400", async () => {
    const tools = [{ type: "function", function: { name: "exec_command", parameters: { type: "object" } } }];
    for (const text of [`[sim tool_call=Bash args=${b64url({ command: "ls" })}]`, "[sim tool_call=exec_command]", "[sim tool_call=exec_command args=!!]"]) {
      for (const stream of [false, true]) {
        const res = await chat("groq", { ...userBody(text), tools, stream });
        expect(res.status).toBe(400);
        expect(((await res.json()) as ErrorBody).error).toMatchObject({ type: "invalid_request_error", code: 400 });
      }
    }
    const none = await chat("groq", userBody(`[sim tool_call=exec_command args=${b64url({})}]`));
    expect(((await none.json()) as ErrorBody).error.message).toContain('"exec_command"');
  });

  it("answers in text when the conversation ends with a tool result, though the user message still holds the directive", async () => {
    const tools = [{ type: "function", function: { name: "exec_command", parameters: { type: "object" } } }];
    const ask = `run it [sim tool_call=exec_command args=${b64url({ cmd: "ls" })}]`;
    const messages = [
      { role: "user", content: ask },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "exec_command", arguments: '{"cmd":"ls"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "out.txt" },
    ];
    for (const directive of [ask, "[sim tool_call]"]) {
      const json = await chatJson("groq", { model: PLAIN, tools, messages: [{ role: "user", content: directive }, ...messages.slice(1)] });
      expect(json.choices[0]!.message.tool_calls).toBeUndefined();
      expect(json.choices[0]!.finish_reason).toBe("stop");
      expect(words(json.choices[0]!.message.content).length).toBeGreaterThan(0);
      const { chunks } = await chatStream("groq", { model: PLAIN, tools, messages: [{ role: "user", content: directive }, ...messages.slice(1)] });
      expect(chunks.some((c) => c.choices[0]?.delta.tool_calls)).toBe(false);
    }
  });

  it("calls a tool named lookup when the request has no tools", async () => {
    const json = await chatJson("groq", userBody("[sim tokens=5 tool_call]"));
    expect(json.choices[0]!.message.tool_calls![0]!.function.name).toBe("lookup");
    expect(json.usage!.completion_tokens).toBe(5);
  });

  it("puts its own provider field right after model with provider_field", async () => {
    const { data } = await chatStream("groq", userBody("[sim tokens=2 provider_field]", { stream_options: { include_usage: true } }));
    for (const d of data.slice(0, -1))
      expect(d).toMatch(
        /^\{"id":"chatcmpl-[0-9a-f]+","object":"chat\.completion\.chunk","created":\d+,"model":"plain-upstream","provider":"Sim groq","choices":/,
      );
    expect(await chatJson("groq", userBody("[sim provider_field]"))).toMatchObject({ provider: "Sim groq" });
  });

  it("leaves out the finish reason with no_finish", async () => {
    expect((await chatJson("groq", userBody("[sim tokens=0 no_finish]"))).choices[0]).toMatchObject({ message: { content: "" }, finish_reason: null });
    const { chunks } = await chatStream("groq", userBody("[sim tokens=2 no_finish]", { stream_options: { include_usage: true } }));
    expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, null, null, null]);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(2);
  });

  it("counts each image at the catalog's image_tokens of the upstream model, else 1,600", async () => {
    const parts = [
      { type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ];
    const messages = [{ role: "user", content: parts }];
    const text = countTokens("What is this?") + 4;
    expect((await chatJson("acme", { model: REASONING_UPSTREAM, messages })).usage!.prompt_tokens).toBe(text + 300);
    expect((await chatJson("acme", { model: PLAIN, messages })).usage!.prompt_tokens).toBe(text + 300); // another endpoint of the same model
    expect((await chatJson("other", { model: "not-in-the-catalog", messages })).usage!.prompt_tokens).toBe(text + 1600);
  });
});

describe("a carrier double for everything a carrier bills", () => {
  it("n choices: each its own words, each capped, usage summed over them", async () => {
    const json = await chatJson("groq", userBody("several [sim tokens=5]", { n: 3 }));
    expect(json.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(json.choices.map((c) => words(c.message.content).length)).toEqual([5, 5, 5]);
    expect(new Set(json.choices.map((c) => c.message.content)).size).toBe(3);
    expect(json.usage!.completion_tokens).toBe(15);
    // Choice 0 is the answer the request gets without n.
    expect(json.choices[0]!.message.content).toBe((await chatJson("groq", userBody("several [sim tokens=5]"))).choices[0]!.message.content);
    expect((await chatJson("groq", userBody("capped [sim tokens=20]", { n: 2, max_tokens: 4 }))).usage!.completion_tokens).toBe(8);
  });

  it("best_of: bills every candidate, answers n", async () => {
    const json = await chatJson("groq", userBody("best [sim tokens=4]", { n: 1, best_of: 5 }));
    expect(json.choices).toHaveLength(1);
    expect(json.usage!.completion_tokens).toBe(20);
  });

  it("streams n choices one after another, each with its index, role and finish chunk; one usage chunk", async () => {
    const { chunks } = await chatStream("groq", userBody("stream several [sim tokens=3]", { n: 2, stream_options: { include_usage: true } }));
    const perChoice = (i: number) => chunks.filter((c) => c.choices[0]?.index === i);
    for (const i of [0, 1]) {
      const mine = perChoice(i);
      expect(mine[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
      expect(mine.filter((c) => c.choices[0]!.delta.content).length).toBe(3);
      expect(mine.at(-1)!.choices[0]!.finish_reason).toBe("stop");
    }
    expect(chunks.findIndex((c) => c.choices[0]?.index === 1)).toBeGreaterThan(chunks.findLastIndex((c) => c.choices[0]?.index === 0));
    expect(chunks.filter((c) => c.usage)).toHaveLength(1);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(6);
  });

  it("cap_field=max_tokens reads only max_tokens, cap_field=max_completion_tokens only that one", async () => {
    const both = { max_tokens: 12, max_completion_tokens: 3 };
    expect((await chatJson("groq", userBody("[sim tokens=20]", both))).usage!.completion_tokens).toBe(3); // default: max_completion_tokens first
    expect((await chatJson("groq", userBody("[sim tokens=20 cap_field=max_tokens]", both))).usage!.completion_tokens).toBe(12);
    expect(
      (await chatJson("groq", userBody("[sim tokens=20 cap_field=max_completion_tokens]", { max_tokens: 2, max_completion_tokens: 9 }))).usage!
        .completion_tokens,
    ).toBe(9);
    expect((await chatJson("groq", userBody("[sim tokens=20 cap_field=max_completion_tokens]", { max_tokens: 2 }))).usage!.completion_tokens).toBe(20); // reads no cap at all
  });

  it("reasoning_beyond_cap: the cap bounds the content; the reasoning budget is billed on top", async () => {
    const body = { ...userBody("think [sim tokens=30]"), model: REASONING_UPSTREAM, max_tokens: 10, reasoning: { max_tokens: 50 } };
    const beyond = await chatJson("beyond", body);
    expect(words(beyond.choices[0]!.message.content)).toHaveLength(10);
    expect(words(beyond.choices[0]!.message.reasoning ?? "")).toHaveLength(50);
    expect(beyond.usage).toMatchObject({ completion_tokens: 60, completion_tokens_details: { reasoning_tokens: 50 } });
    // Without a budget: a quarter of the content, still on top of the cap.
    expect((await chatJson("beyond", { ...body, reasoning: undefined })).usage!.completion_tokens).toBe(10 + 3);
    // The same upstream model at a carrier without the flag keeps reasoning within the cap.
    expect((await chatJson("acme", body)).usage!.completion_tokens).toBe(10);
  });

  it("counts file, input_audio, video_url and input_video parts at the model's allowances, else 1,600", async () => {
    const parts = [
      { type: "text", text: "What is this?" },
      { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
      { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
      { type: "video_url", video_url: { url: "https://example.test/a.mp4" } },
      { type: "input_video", video_url: { url: "https://example.test/b.mp4" } },
    ];
    const messages = [{ role: "user", content: parts }];
    const text = countTokens("What is this?") + 4;
    expect((await chatJson("acme", { model: PLAIN, messages })).usage!.prompt_tokens).toBe(text + 2000 + 700 + 2 * 9000);
    expect((await chatJson("other", { model: "not-in-the-catalog", messages })).usage!.prompt_tokens).toBe(text + 4 * 1600);
  });
});

describe("streams", () => {
  it("emits role, one chunk per token, finish, usage and [DONE] with one id", async () => {
    const body = userBody("Stream please [sim tokens=6]", { stream_options: { include_usage: true } });
    const { data, chunks } = await chatStream("groq", body);
    expect(data).toHaveLength(1 + 6 + 1 + 1 + 1);
    expect(chunks).toHaveLength(9);
    const id = chunks[0]!.id;
    expect(id).toMatch(/^chatcmpl-/);
    for (const c of chunks) {
      expect(c).toMatchObject({ id, object: "chat.completion.chunk", model: PLAIN });
      expect(typeof c.created).toBe("number");
    }
    expect(chunks[0]!.choices).toEqual([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    const tokens = chunks.slice(1, 7).map((c) => c.choices[0]!.delta.content as string);
    for (const t of tokens) expect(t).toMatch(/^ [a-z]+$/);
    expect(chunks[7]!.choices).toEqual([{ index: 0, delta: {}, finish_reason: "stop" }]);
    expect(chunks[8]!.choices).toEqual([]);
    // "Stream please [ sim tokens = 6 ]" = 8, plus 4.
    expect(chunks[8]!.usage).toEqual({ prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 });
    // The same request without streaming says the same thing.
    const json = await chatJson("groq", body);
    expect(tokens.join("")).toBe(json.choices[0]!.message.content);
  });

  it("sends no usage chunk unless include_usage, nor with no_usage", async () => {
    const plain = await chatStream("groq", userBody("[sim tokens=3]"));
    expect(plain.chunks.some((c) => "usage" in c)).toBe(false);
    expect(plain.chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
    const none = await chatStream("groq", userBody("[sim tokens=3 no_usage]", { stream_options: { include_usage: true } }));
    expect(none.chunks.some((c) => "usage" in c)).toBe(false);
    expect(none.data).toHaveLength(1 + 3 + 1 + 1);
  });

  it("finishes with length when capped", async () => {
    const { chunks } = await chatStream("groq", userBody("[sim tokens=9]", { max_tokens: 2, stream_options: { include_usage: true } }));
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("length");
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(2);
  });

  it("puts one non-JSON event in the middle when malformed", async () => {
    const { data } = await chatStream("groq", userBody("[sim tokens=6 malformed]"));
    const bad = data.flatMap((d, i) => {
      try {
        JSON.parse(d === "[DONE]" ? "null" : d);
        return [];
      } catch {
        return [i];
      }
    });
    expect(bad).toHaveLength(1);
    expect(bad[0]).toBeGreaterThan(1);
    expect(bad[0]).toBeLessThan(data.length - 2);
  });

  it("interleaves junk lines with garbage, keeping the real events intact", async () => {
    const { raw, chunks } = await chatStream("groq", userBody("[sim tokens=6 garbage]", { stream_options: { include_usage: true } }));
    expect(raw).toContain(": ping\n");
    expect(raw).toContain("event: foo\n");
    expect(raw).toContain("this line has no data field\n");
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(words(content)).toHaveLength(6);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(6);
  });

  it("streams big content as one long token", async () => {
    const { chunks } = await chatStream("groq", userBody("[sim tokens=3 big=50000]", { stream_options: { include_usage: true } }));
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(content.length).toBeGreaterThanOrEqual(50_000);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(3);
  });

  it("answers at once when unpaced", async () => {
    const t0 = performance.now();
    await chatStream("groq", userBody("[sim tokens=200]"));
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe("errors and timing", () => {
  it("responds with status= and an OpenAI-style error, also for streams", async () => {
    for (const stream of [false, true]) {
      const res = await chat("groq", userBody("[sim status=503]", { stream }));
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toEqual({ error: { message: "simulated 503 from groq", type: "sim_error", code: 503 } });
    }
    const ok = await chat("groq", userBody("[sim status=200]"));
    expect(ok.status).toBe(200);
  });

  it("scopes status= to the named carriers", async () => {
    const body = userBody("[sim carrier=a status=503] [sim carrier=b status=429]");
    expect((await chat("a", body)).status).toBe(503);
    const b = await chat("b", body);
    expect(b.status).toBe(429);
    expect(((await b.json()) as ErrorBody).error.message).toBe("simulated 429 from b");
    expect((await chat("c", body)).status).toBe(200);
  });

  it("waits delay_ms before the headers", async () => {
    const t0 = performance.now();
    const res = await chat("groq", userBody("[sim delay_ms=300]"));
    const elapsed = performance.now() - t0;
    expect(res.status).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(295); // timers may round down by a millisecond or so
    expect(elapsed).toBeLessThan(3000);
  });

  it("paces streams at tps= chunk by chunk", async () => {
    const res = await chat("groq", userBody("[sim tokens=10 tps=50]", { stream: true }));
    const reader = res.body!.getReader();
    const arrivals: number[] = [];
    const t0 = performance.now();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - t0);
    }
    // 10 tokens at 50/s: 20 ms before each token chunk.
    expect(arrivals.at(-1)!).toBeGreaterThanOrEqual(180);
    expect(arrivals.at(-1)!).toBeLessThan(3000);
    expect(arrivals.length).toBeGreaterThan(5); // delivered incrementally, not in one buffer
  });

  it("paces with the server tps option", async () => {
    const slow = await startSimulator({ tps: 100 });
    try {
      const t0 = performance.now();
      await (await chat("groq", userBody("[sim tokens=10]", { stream: true }), { base: slow.url })).text();
      const paced = performance.now() - t0;
      expect(paced).toBeGreaterThanOrEqual(90);
      expect(paced).toBeLessThan(3000);
    } finally {
      await slow.close();
    }
  });
});

describe("resets, hangs and the request log", () => {
  it("reset_after=0 drops the connection before any response", async () => {
    await expect(chat("groq", userBody("[sim reset_after=0 tag=reset0]"))).rejects.toThrow(TypeError);
    const [rec] = await records("reset0");
    expect(rec).toMatchObject({ outcome: "reset", chunks_sent: 0 });
  });

  it("reset_after=N cuts a stream after N events", async () => {
    const res = await chat("groq", userBody("[sim tokens=10 reset_after=3 tag=reset3]", { stream: true }));
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = "";
    const drain = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        received += decoder.decode(value, { stream: true });
      }
    };
    await expect(drain()).rejects.toThrow();
    expect(sseData(received)).toHaveLength(3);
    const [rec] = await records("reset3");
    expect(rec).toMatchObject({ outcome: "reset", chunks_sent: 3 });
  });

  it("reset_after=N>0 truncates a non-stream body", async () => {
    const res = await chat("groq", userBody("[sim reset_after=1 tag=reset-ns]"));
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    const [rec] = await records("reset-ns");
    expect(rec!.outcome).toBe("reset");
  });

  it("hang never answers until the client aborts, and records the abort", async () => {
    const controller = new AbortController();
    const pending = chat("groq", userBody("[sim hang tag=hang1]"), { signal: controller.signal });
    pending.catch(() => undefined); // observed below; avoid an unhandled rejection meanwhile
    const [held] = await records("hang1", { until: "hang" });
    expect(held!.outcome).toBe("hang");
    // Measuring the hang itself: nothing arrives within 300 ms.
    const raced = await Promise.race([pending.then(() => "answered"), new Promise((r) => setTimeout(r, 300, "still hanging"))]);
    expect(raced).toBe("still hanging");
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    const [rec] = await records("hang1", { until: "aborted" });
    expect(rec!.outcome).toBe("aborted");
  });

  it("records a stream the client abandons as aborted", async () => {
    const controller = new AbortController();
    const res = await chat("groq", userBody("[sim tokens=40 tps=50 tag=abandon]", { stream: true }), { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const [rec] = await records("abandon");
    expect(rec!.outcome).toBe("aborted");
    expect(rec!.chunks_sent).toBeGreaterThan(0);
    expect(rec!.chunks_sent).toBeLessThan(1 + 40 + 1 + 1);
  });

  it("records body, carrier and whether authorization was sent, never its value", async () => {
    const body = userBody("[sim tag=log1]", { temperature: 0.2 });
    await (await chat("groq", body, { headers: { authorization: "Bearer sk-secret-123" } })).text();
    await (await chat("cerebras", { ...body, stream: true })).text();
    const res = await fetch(`${sim.url}/__sim/requests?tag=log1&wait_ms=3000`, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    expect(text).not.toContain("sk-secret-123");
    const { requests } = JSON.parse(text) as { requests: RequestRecord[] };
    expect(requests).toEqual([
      {
        tag: "log1",
        carrier: "groq",
        protocol: "openai-chat",
        path: "/groq/v1/chat/completions",
        body,
        headers: { authorization: true, x_api_key: false, x_goog_api_key: false, anthropic_version: false, anthropic_beta: null },
        outcome: "completed",
        chunks_sent: 1,
        connection: expect.any(Number),
        received_mono_ms: expect.any(Number),
        first_write_mono_ms: expect.any(Number),
        // A fingerprint of the key, never the key: the first 16 hex digits of its SHA-256.
        credential_sha256: createHash("sha256").update("sk-secret-123").digest("hex").slice(0, 16),
      },
      expect.objectContaining({
        carrier: "cerebras",
        credential_sha256: null,
        body: { ...body, stream: true },
        headers: expect.objectContaining({ authorization: false }),
        outcome: "completed",
      }),
    ]);
    expect(requests[1]!.chunks_sent).toBeGreaterThan(3);
    expect(await records("no-such-tag", { waitMs: 1 })).toEqual([]);
  });

  it("numbers the connection each request came on: a kept-alive connection keeps its number, a new one gets the next", async () => {
    const { request, Agent } = await import("node:http");
    const post = (tag: string, agent: InstanceType<typeof Agent> | false) =>
      new Promise<void>((resolve, reject) => {
        const payload = JSON.stringify(userBody(`[sim tag=${tag}]`));
        const url = new URL(`${sim.url}/groq/v1/chat/completions`);
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent, headers: { "content-type": "application/json" } },
          (res) => {
            res.resume();
            res.on("end", resolve);
          },
        );
        req.on("error", reject);
        req.end(payload);
      });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const tag = `conn-${Date.now()}`;
    await post(`${tag}-a`, agent);
    await post(`${tag}-b`, agent);
    await post(`${tag}-c`, false);
    agent.destroy();
    const [a, b, c] = await Promise.all(["a", "b", "c"].map(async (x) => (await records(`${tag}-${x}`))[0]!.connection));
    expect(a).toBeGreaterThan(0);
    expect(b).toBe(a);
    expect(c).toBeGreaterThan(a!);
  });

  it("times each request on the machine's monotonic clock: arrival, then its answer's first byte, before the client has it", async () => {
    const { request } = await import("node:http");
    const now = () => Number(process.hrtime.bigint()) / 1e6;
    // A stream whose carrier waits 30 ms before its first byte, a whole answer, and an error answer (no first byte of an answer).
    const timed = (tag: string, extra: Record<string, unknown>) =>
      new Promise<{ sent: number; first: number }>((resolve, reject) => {
        const payload = JSON.stringify(userBody(`[sim tag=${tag}]`, extra));
        const url = new URL(`${sim.url}/groq/v1/chat/completions`);
        const sent = now();
        let first = NaN;
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { "content-type": "application/json" } },
          (res) => {
            res.on("data", () => (first = Number.isNaN(first) ? now() : first));
            res.on("end", () => resolve({ sent, first }));
          },
        );
        req.on("error", reject);
        req.end(payload);
      });
    const tag = `mono-${Date.now()}`;
    const stream = await timed(`${tag}-s`, { stream: true, messages: [{ role: "user", content: `[sim tag=${tag}-s delay_ms=30]` }] });
    const whole = await timed(`${tag}-w`, {});
    await timed(`${tag}-e`, { messages: [{ role: "user", content: `[sim tag=${tag}-e status=503]` }] });
    const [s, w, e] = await Promise.all(["s", "w", "e"].map(async (x) => (await records(`${tag}-${x}`))[0]!));
    for (const [rec, client] of [
      [s!, stream],
      [w!, whole],
    ] as const) {
      expect(rec.received_mono_ms).toBeGreaterThanOrEqual(client.sent);
      expect(rec.first_write_mono_ms).toBeGreaterThanOrEqual(rec.received_mono_ms);
      expect(rec.first_write_mono_ms).toBeLessThanOrEqual(client.first);
    }
    expect(s!.first_write_mono_ms! - s!.received_mono_ms).toBeGreaterThanOrEqual(30);
    expect(e!.received_mono_ms).toBeGreaterThanOrEqual(whole.first);
    expect(e!.first_write_mono_ms).toBeNull();
  });

  it("records a client that gives up during delay_ms as aborted", async () => {
    const controller = new AbortController();
    const pending = chat("groq", userBody("[sim delay_ms=20000 tag=delay-abort]"), { signal: controller.signal });
    pending.catch(() => undefined);
    // The record exists (pending) once the body was read: wait for it, then give up.
    const [held] = await records("delay-abort", { until: "pending" });
    expect(held!.outcome).toBe("pending");
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    const [rec] = await records("delay-abort", { until: "aborted" });
    expect(rec).toMatchObject({ outcome: "aborted", chunks_sent: 0 });
  });

  it("linger keeps the connection open after [DONE] until the client closes it", async () => {
    const controller = new AbortController();
    const res = await chat("groq", userBody("[sim tokens=3 linger tag=linger1]", { stream: true }), { signal: controller.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = "";
    while (!received.includes("data: [DONE]\n\n")) {
      const { done, value } = await reader.read();
      expect(done).toBe(false);
      received += decoder.decode(value, { stream: true });
    }
    expect(sseData(received)).toHaveLength(1 + 3 + 1 + 1);
    const [open] = await records("linger1", { waitMs: 1 });
    expect(open).toMatchObject({ outcome: "pending", chunks_sent: 6 });
    controller.abort();
    const [rec] = await records("linger1", { until: "aborted" });
    expect(rec!.outcome).toBe("aborted");
  });

  it("records status errors as error", async () => {
    await (await chat("groq", userBody("[sim status=500 tag=err1]"))).text();
    const [rec] = await records("err1");
    expect(rec!.outcome).toBe("error");
  });
});

describe("carrier profiles", () => {
  type Listed = { mode: string; profiles: Record<string, { first_byte_ms: number; tps: number | null; source: string }> };

  async function profiles(query = "", base = sim.url): Promise<Listed> {
    const res = await fetch(`${base}/__sim/profiles${query}`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(200);
    return (await res.json()) as Listed;
  }

  function control(method: string, path: string, body?: Json, base = sim.url) {
    return fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
  }

  it("gives each slug its own small default profile, the same on every call", async () => {
    const { mode, profiles: p } = await profiles("?carrier=alpha-co&carrier=beta-co");
    expect(mode).toBe("default");
    expect(Object.keys(p)).toEqual(["alpha-co", "beta-co"]);
    for (const prof of Object.values(p)) {
      expect(prof.source).toBe("default");
      expect(prof.first_byte_ms).toBeGreaterThanOrEqual(FIRST_BYTE_MS_RANGE[0]);
      expect(prof.first_byte_ms).toBeLessThanOrEqual(FIRST_BYTE_MS_RANGE[1]);
      expect(prof.tps).toBeGreaterThanOrEqual(TPS_RANGE[0]);
      expect(prof.tps).toBeLessThanOrEqual(TPS_RANGE[1]);
    }
    expect(p["alpha-co"]).not.toEqual(p["beta-co"]);
    expect(p["alpha-co"]).toEqual({ ...defaultProfile("alpha-co"), source: "default" });
    expect(defaultProfile("alpha-co")).toEqual(defaultProfile("alpha-co"));
  });

  it("lists the catalog's carriers and the ones played", async () => {
    await chatJson("played-co", userBody("hi"));
    const listed = Object.keys((await profiles()).profiles);
    expect(listed).toEqual(expect.arrayContaining(["acme", "other", "played-co"]));
  });

  it("takes a runtime override, shown by GET and obeyed by the stream, until reset", async () => {
    const set = await control("POST", "/__sim/profile", { carrier: "slow-co", first_byte_ms: 0, tps: 20 });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({ carrier: "slow-co", profile: { first_byte_ms: 0, tps: 20, source: "override" } });
    expect((await profiles("?carrier=slow-co")).profiles["slow-co"]).toEqual({ first_byte_ms: 0, tps: 20, source: "override" });

    const { data } = await chatStream("slow-co", userBody("[sim tokens=3 tag=profiled]"));
    expect(data).toHaveLength(1 + 3 + 1 + 1); // role, 3 tokens, finish, [DONE]
    const [rec] = await records("profiled");
    expect(rec).toMatchObject({ carrier: "slow-co", outcome: "completed", chunks_sent: 6 });

    // A partial override keeps the other field: tps stays 20, and null means unlimited.
    await control("POST", "/__sim/profile", { carrier: "slow-co", first_byte_ms: 7 });
    expect((await profiles("?carrier=slow-co")).profiles["slow-co"]).toEqual({ first_byte_ms: 7, tps: 20, source: "override" });
    await control("POST", "/__sim/profile", { carrier: "slow-co", tps: null });
    expect((await profiles("?carrier=slow-co")).profiles["slow-co"]).toEqual({ first_byte_ms: 7, tps: null, source: "override" });

    const reset = await control("POST", "/__sim/profile", { carrier: "slow-co", reset: true });
    expect(await reset.json()).toEqual({ carrier: "slow-co", profile: { ...defaultProfile("slow-co"), source: "default" } });
    await control("POST", "/__sim/profile", { carrier: "slow-co", tps: 5 });
    expect((await control("DELETE", "/__sim/profile?carrier=slow-co")).status).toBe(200);
    expect((await profiles("?carrier=slow-co")).profiles["slow-co"]!.source).toBe("default");
  });

  it("rejects a malformed override", async () => {
    for (const body of [{ first_byte_ms: 1 }, { carrier: "x", first_byte_ms: -1 }, { carrier: "x", tps: "fast" }]) {
      const res = await control("POST", "/__sim/profile", body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).error.type).toBe("invalid_request_error");
    }
  });

  it("has no profiles with profiles: off (the --tps pace aside), yet takes overrides", async () => {
    const off = await startSimulator({ profiles: "off" });
    const offPaced = await startSimulator({ profiles: "off", tps: 100 });
    try {
      expect(await profiles("?carrier=alpha-co", off.url)).toEqual({ mode: "off", profiles: { "alpha-co": { first_byte_ms: 0, tps: null, source: "off" } } });
      expect((await profiles("?carrier=alpha-co", offPaced.url)).profiles["alpha-co"]).toEqual({ first_byte_ms: 0, tps: 100, source: "off" });
      await control("POST", "/__sim/profile", { carrier: "alpha-co", first_byte_ms: 3 }, off.url);
      expect((await profiles("?carrier=alpha-co", off.url)).profiles["alpha-co"]).toEqual({ first_byte_ms: 3, tps: null, source: "override" });
      const res = await chat("alpha-co", userBody("[sim tokens=4]"), { base: off.url });
      expect(((await res.json()) as Completion).usage!.completion_tokens).toBe(4);
    } finally {
      await off.close();
      await offPaced.close();
    }
  });

  it("lets --tps replace the default pace but not an override", async () => {
    const paced = await startSimulator({ tps: 100 });
    try {
      expect((await profiles("?carrier=alpha-co", paced.url)).profiles["alpha-co"]).toEqual({
        first_byte_ms: defaultProfile("alpha-co").first_byte_ms,
        tps: 100,
        source: "default",
      });
      await control("POST", "/__sim/profile", { carrier: "alpha-co", tps: 3000 }, paced.url);
      expect((await profiles("?carrier=alpha-co", paced.url)).profiles["alpha-co"]!.tps).toBe(3000);
    } finally {
      await paced.close();
    }
  });
});

describe("outages", () => {
  async function outages(): Promise<Record<string, { remaining: number; status: number }>> {
    const res = await fetch(`${sim.url}/__sim/outage`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { outages: Record<string, { remaining: number; status: number }> }).outages;
  }

  function arm(body: Json) {
    return fetch(`${sim.url}/__sim/outage`, { method: "POST", body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
  }

  it("fails exactly the next N requests to the carrier, whatever they say, then answers normally", async () => {
    expect((await arm({ carrier: "down-co", requests: 2 })).status).toBe(200);
    expect((await outages())["down-co"]).toEqual({ remaining: 2, status: 503 });
    expect((await chat("up-co", userBody("[sim tag=outage-n]"))).status).toBe(200); // other carriers are up
    const first = await chat("down-co", userBody("[sim tag=outage-n status=200]"));
    expect(first.status).toBe(503);
    expect(await first.json()).toEqual({ error: { message: "simulated outage: 503 from down-co", type: "sim_error", code: 503 } });
    expect((await outages())["down-co"]).toEqual({ remaining: 1, status: 503 });
    expect((await chat("down-co", userBody("[sim tag=outage-n]", { stream: true }))).status).toBe(503);
    expect((await outages())["down-co"]).toBeUndefined();
    expect((await chat("down-co", userBody("[sim tag=outage-n]"))).status).toBe(200);
    const recs = await records("outage-n");
    expect(recs.map((r) => [r.carrier, r.outcome])).toEqual([
      ["up-co", "completed"],
      ["down-co", "error"],
      ["down-co", "error"],
      ["down-co", "completed"],
    ]);
  });

  it("takes a status, 0 resetting the connection, and requests: 0 ends it", async () => {
    await arm({ carrier: "reset-co", requests: 1, status: 0 });
    await expect(chat("reset-co", userBody("[sim tag=outage-reset]"))).rejects.toThrow(TypeError);
    expect((await records("outage-reset"))[0]).toMatchObject({ outcome: "reset", chunks_sent: 0 });
    await arm({ carrier: "gone-co", requests: 5, status: 429 });
    expect((await outages())["gone-co"]).toEqual({ remaining: 5, status: 429 });
    await arm({ carrier: "gone-co", requests: 0 });
    expect((await outages())["gone-co"]).toBeUndefined();
    for (const bad of [{ requests: 1 }, { carrier: "x", requests: -1 }, { carrier: "x", requests: 1, status: 200 }]) {
      expect((await arm(bad)).status).toBe(400);
    }
  });

  it("arms from a directive once per message, the carrying request counting as the first", async () => {
    const text = "[sim outage carrier=flaky-co requests=2 status=429] [sim tag=outage-directive]";
    expect((await chat("steady-co", userBody(text))).status).toBe(200); // scoped to flaky-co: nothing armed here
    expect((await outages())["steady-co"]).toBeUndefined();
    expect((await chat("flaky-co", userBody(text))).status).toBe(429);
    expect((await outages())["flaky-co"]).toEqual({ remaining: 1, status: 429 });
    expect((await chat("flaky-co", userBody(text))).status).toBe(429); // the same message does not re-arm
    expect((await chat("flaky-co", userBody(text))).status).toBe(200); // nor does its status= apply to the request
    expect((await records("outage-directive")).map((r) => r.outcome)).toEqual(["completed", "error", "error", "completed"]);
  });

  it("parses the outage directive apart from the request's own words", () => {
    expect(parseDirectives("[sim outage requests=3 status=502 tokens=4] [sim tokens=5]", "a")).toMatchObject({
      outage: { requests: 3, status: 502 },
      tokens: 5,
    });
    const d = parseDirectives("[sim outage status=200]", "a");
    expect(d.outage).toEqual({ requests: 1, status: 503 });
    expect(d.status).toBeUndefined();
    expect(parseDirectives("[sim outage carrier=b]", "a").outage).toBeUndefined();
  });
});

describe("CLI", () => {
  it("prints its URL, serves, and exits on SIGTERM", async () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const child = spawn(join(root, "node_modules/.bin/tsx"), [join(root, "simulator/main.ts"), "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const lines = createInterface({ input: child.stdout! });
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no output from the CLI")), 15_000);
        lines.once("line", (l) => {
          clearTimeout(timer);
          resolve(l);
        });
      });
      expect(line).toMatch(/^simulator listening on http:\/\/127\.0\.0\.1:\d+$/);
      const url = line.slice("simulator listening on ".length);
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
      expect(await res.json()).toEqual({ ok: true });
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 20_000);
});
