import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RequestRecord, type Simulator } from "../../simulator/server";
import { sign } from "../../simulator/wire";

// The simulator's Anthropic Messages and Gemini protocols, over real HTTP: auth, validation, answers,
// event order, usage meanings, errors, directives in each protocol's form, and the prompt caches.
type Json = Record<string, any>;
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ profiles: "off" });
});
afterAll(() => sim.close());

const ANTHROPIC_HEADERS = { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" };
const messages = (body: Json, headers: Record<string, string> = ANTHROPIC_HEADERS) =>
  fetch(`${sim.url}/anthropic/v1/messages`, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
const generate = (body: Json, stream = false, headers: Record<string, string> = { "content-type": "application/json", "x-goog-api-key": "g" }) =>
  fetch(`${sim.url}/google-ai-studio/v1beta/models/gemini-2.5-flash:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
const claude = (text: string, extra: Json = {}) => ({
  model: "claude-haiku-4-5-20251001",
  max_tokens: 100,
  messages: [{ role: "user", content: text }],
  ...extra,
});
const gem = (text: string, extra: Json = {}) => ({ contents: [{ role: "user", parts: [{ text }] }], ...extra });

/** An Anthropic stream's events as [event name, data]. */
async function namedEvents(res: Response): Promise<[string, Json][]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => {
      const [eventLine, dataLine] = frame.split("\n");
      return [eventLine!.slice("event: ".length), JSON.parse(dataLine!.slice("data: ".length)) as Json];
    });
}

/** A `[sim tool_call=…]` directive's `args=` value. */
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

async function records(tag: string): Promise<RequestRecord[]> {
  return ((await (await fetch(`${sim.url}/__sim/requests?tag=${tag}&wait_ms=3000`)).json()) as { requests: RequestRecord[] }).requests;
}

describe("simulator: Anthropic Messages", () => {
  it("answers a message: content blocks, stop_reason, usage with input_tokens excluding the cache", async () => {
    const res = await messages(claude("hi [sim tokens=6 cache_read=2 cache_write=3]", { system: "be brief" }));
    expect(res.status).toBe(200);
    const m = (await res.json()) as Json;
    expect(m).toMatchObject({ type: "message", role: "assistant", model: "claude-haiku-4-5-20251001", stop_reason: "end_turn", stop_sequence: null });
    expect(m.id).toMatch(/^msg_/);
    expect(m.content).toEqual([{ type: "text", text: expect.any(String) }]);
    expect(m.usage).toMatchObject({ cache_read_input_tokens: 2, cache_creation_input_tokens: 3, output_tokens: 6 });
    // The same request without cache figures: the whole prompt is input.
    const plain = (await (await messages(claude("hi [sim tokens=6 cache_read=0 cache_write=0]", { system: "be brief" }))).json()) as Json;
    expect(m.usage.input_tokens + 2 + 3).toBe(plain.usage.input_tokens);
  });

  it("streams every block opened and closed with its index, in Anthropic's order", async () => {
    const res = await messages(
      claude("go [sim tokens=9 tool_call]", {
        stream: true,
        max_tokens: 3000,
        thinking: { type: "enabled", budget_tokens: 1024 },
        tools: [{ name: "lookup", input_schema: { type: "object" } }],
      }),
    );
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = await namedEvents(res);
    const names = events.map(([name]) => name);
    expect(names[0]).toBe("message_start");
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    for (const [name, data] of events) expect(data.type).toBe(name);
    const starts = events.filter(([n]) => n === "content_block_start").map(([, d]) => [d.index, d.content_block.type]);
    const stops = events.filter(([n]) => n === "content_block_stop").map(([, d]) => d.index);
    expect(starts).toEqual([
      [0, "thinking"],
      [1, "tool_use"],
    ]);
    expect(stops).toEqual([0, 1]);
    const thinking = events
      .filter(([, d]) => d.delta?.type === "thinking_delta")
      .map(([, d]) => d.delta.thinking as string)
      .join("");
    const signature = events.find(([, d]) => d.delta?.type === "signature_delta")![1].delta.signature;
    expect(signature).toBe(sign(thinking));
    const json = events
      .filter(([, d]) => d.delta?.type === "input_json_delta")
      .map(([, d]) => d.delta.partial_json as string)
      .join("");
    expect(JSON.parse(json)).toHaveProperty("query");
    const delta = events.find(([n]) => n === "message_delta")![1];
    expect(delta).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } });
  });

  it("calls the named tool as a tool_use block with exactly the directive's input, streamed in several input_json_delta", async () => {
    const tools = [
      { name: "Bash", input_schema: { type: "object" } },
      { name: "Write", input_schema: { type: "object", properties: { file_path: { type: "string" }, content: { type: "string" } } } },
    ];
    const input = { file_path: "/w/notes.txt", content: "two\nlines" };
    const body = claude(`write it [sim tool_call=Write args=${b64url(input)}]`, { tools });
    const m = (await (await messages(body)).json()) as Json;
    expect(m.stop_reason).toBe("tool_use");
    expect(m.content).toEqual([{ type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "Write", input }]);
    const events = await namedEvents(await messages({ ...body, stream: true }));
    const start = events.find(([n]) => n === "content_block_start")![1];
    expect(start.content_block).toEqual({ type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "Write", input: {} });
    const fragments = events.filter(([, d]) => d.delta?.type === "input_json_delta").map(([, d]) => d.delta.partial_json as string);
    expect(fragments.length).toBeGreaterThan(1);
    expect(JSON.parse(fragments.join(""))).toEqual(input);
    expect(events.find(([n]) => n === "message_delta")![1]).toMatchObject({
      delta: { stop_reason: "tool_use" },
      usage: { output_tokens: 1 + fragments.length },
    });
  });

  it("refuses a named call of an undeclared tool (400 invalid_request_error); answers text after a tool_result, a call when the user asks again beside it", async () => {
    const tools = [{ name: "Write", input_schema: { type: "object" } }];
    const ask = `go [sim tool_call=Bash args=${b64url({ command: "ls" })}]`;
    for (const stream of [false, true]) {
      const res = await messages(claude(ask, { tools, stream }));
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining('"Bash"') } });
    }
    const write = `go [sim tool_call=Write args=${b64url({ file_path: "/w/a", content: "x" })}]`;
    const turns = (last: Json[]) => [
      { role: "user", content: write },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Write", input: { file_path: "/w/a", content: "x" } }] },
      { role: "user", content: last },
    ];
    // The result itself holds the directive (a command that echoed the prompt): still the loop's end.
    const loop = claude(write, { tools, messages: turns([{ type: "tool_result", tool_use_id: "toolu_1", content: `cat: ${write}` }]) });
    const m = (await (await messages(loop)).json()) as Json;
    expect(m.stop_reason).toBe("end_turn");
    expect(m.content).toEqual([{ type: "text", text: expect.any(String) }]);
    const events = await namedEvents(await messages({ ...loop, stream: true }));
    expect(events.some(([, d]) => d.content_block?.type === "tool_use")).toBe(false);
    // The user's next words beside the result ask again: a call.
    const again = claude(write, {
      tools,
      messages: turns([
        { type: "tool_result", tool_use_id: "toolu_1", content: "File created" },
        { type: "text", text: write },
      ]),
    });
    expect(((await (await messages(again)).json()) as Json).stop_reason).toBe("tool_use");
  });

  it.each([
    [{ ...ANTHROPIC_HEADERS, "x-api-key": undefined }, claude("x"), 401, "authentication_error"],
    [{ "content-type": "application/json", "x-api-key": "k" }, claude("x"), 400, "invalid_request_error"],
    [ANTHROPIC_HEADERS, { ...claude("x"), max_tokens: undefined }, 400, "invalid_request_error"],
    [ANTHROPIC_HEADERS, { ...claude("x"), n: 2 }, 400, "invalid_request_error"],
    [ANTHROPIC_HEADERS, { ...claude("x"), messages: [{ role: "assistant", content: "a" }] }, 400, "invalid_request_error"],
    [ANTHROPIC_HEADERS, { ...claude("x"), thinking: { type: "enabled", budget_tokens: 500 } }, 400, "invalid_request_error"],
    [ANTHROPIC_HEADERS, { ...claude("x"), output_format: { type: "json_schema", schema: {} } }, 400, "invalid_request_error"], // without its beta flag
    [ANTHROPIC_HEADERS, claude("x [sim status=529]"), 529, "overloaded_error"],
    [ANTHROPIC_HEADERS, claude("x [sim status=429]"), 429, "rate_limit_error"],
  ])("refuses in Anthropic's error shape (%#)", async (headers, body, status, type) => {
    const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const res = await messages(JSON.parse(JSON.stringify(body)) as Json, clean);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ type: "error", error: { type, message: expect.any(String) } });
  });

  it("refuses thinking whose signature changed, and more than 4 cache_control blocks", async () => {
    const turn = (signature: string) => ({
      ...claude("x"),
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "plan", signature },
            { type: "text", text: "a" },
          ],
        },
        { role: "user", content: "next" },
      ],
    });
    expect((await messages(turn(sign("plan")))).status).toBe(200);
    expect((await messages(turn(sign("plan ")))).status).toBe(400);
    const five = [1, 2, 3, 4, 5].map((i) => ({ type: "text", text: String(i), cache_control: { type: "ephemeral" } }));
    expect((await messages({ ...claude("x"), messages: [{ role: "user", content: five }] })).status).toBe(400);
  });

  it("a cache_control breakpoint of 1,024+ tokens is written the first time and read after", async () => {
    await fetch(`${sim.url}/__sim/cache`, { method: "DELETE" });
    const system = [{ type: "text", text: "rule ".repeat(1100), cache_control: { type: "ephemeral" } }];
    const first = (await (await messages(claude("a", { system }))).json()) as Json;
    const second = (await (await messages(claude("b", { system }))).json()) as Json;
    expect(first.usage.cache_creation_input_tokens).toBe(1100);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(second.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 1100 });
    const short = (await (await messages(claude("c", { system: [{ type: "text", text: "short", cache_control: { type: "ephemeral" } }] }))).json()) as Json;
    expect(short.usage.cache_creation_input_tokens).toBe(0);
  });

  it("logs the protocol and path, the headers' presence and anthropic-beta's value", async () => {
    await messages(claude("x [sim tag=anth-log]"), { ...ANTHROPIC_HEADERS, "anthropic-beta": "prompt-caching-2024-07-31" });
    const [r] = await records("anth-log");
    expect(r).toMatchObject({
      protocol: "anthropic-messages",
      path: "/anthropic/v1/messages",
      headers: { authorization: false, x_api_key: true, x_goog_api_key: false, anthropic_version: true, anthropic_beta: "prompt-caching-2024-07-31" },
    });
  });

  it("counts tokens as Anthropic does: {input_tokens}, the whole prompt the same message is billed; generation fields refused; auth checked", async () => {
    const count = (body: Json, headers: Record<string, string> = ANTHROPIC_HEADERS) =>
      fetch(`${sim.url}/anthropic/v1/messages/count_tokens`, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
    const tools = [{ name: "lookup", input_schema: { type: "object" } }];
    const { max_tokens: _cap, ...prompt } = claude("how many tokens is this, all told? [sim cache_read=0 cache_write=0]", { system: "be brief", tools });
    const res = await count(prompt);
    expect(res.status).toBe(200);
    const counted = (await res.json()) as Json;
    expect(Object.keys(counted)).toEqual(["input_tokens"]);
    const billed = ((await (await messages({ ...prompt, max_tokens: 10 })).json()) as Json).usage;
    expect(counted.input_tokens).toBe(billed.input_tokens);
    expect(counted.input_tokens).toBeGreaterThan(0);

    const extra = await count({ ...prompt, max_tokens: 10 });
    expect(extra.status).toBe(400);
    expect(await extra.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: Extra inputs are not permitted" } });
    expect((await count({ ...prompt, stream: true })).status).toBe(400);
    expect((await count({ ...prompt, messages: [{ role: "assistant", content: "x" }] })).status).toBe(400);
    expect((await count(prompt, { "content-type": "application/json", "anthropic-version": "2023-06-01" })).status).toBe(401);
    expect((await count(claude("x [sim status=529]", { max_tokens: undefined }))).status).toBe(529);
  });
});

describe("simulator: Gemini", () => {
  it("answers generateContent: candidates, finishReason, usageMetadata with cached tokens inside the prompt count", async () => {
    const res = await generate(gem("hi [sim tokens=7 cache_read=3]", { generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }));
    expect(res.status).toBe(200);
    const r = (await res.json()) as Json;
    expect(r.candidates).toEqual([{ content: { role: "model", parts: [{ text: expect.any(String) }] }, finishReason: "STOP", index: 0 }]);
    const plain = (await (
      await generate(gem("hi [sim tokens=7 cache_read=0]", { generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }))
    ).json()) as Json;
    expect(r.usageMetadata).toEqual({
      promptTokenCount: plain.usageMetadata.promptTokenCount,
      cachedContentTokenCount: 3,
      candidatesTokenCount: 7,
      totalTokenCount: plain.usageMetadata.promptTokenCount + 7,
    });
  });

  it("thinks by default (thoughtsTokenCount), shows thoughts only with includeThoughts, and gives n candidates", async () => {
    const hidden = (await (await generate(gem("x [sim tokens=8]"))).json()) as Json;
    expect(hidden.usageMetadata).toMatchObject({ thoughtsTokenCount: 2, candidatesTokenCount: 6 });
    expect(hidden.candidates[0].content.parts.some((p: Json) => p.thought)).toBe(false);
    const shown = (await (
      await generate(gem("x [sim tokens=8]", { generationConfig: { candidateCount: 2, thinkingConfig: { includeThoughts: true } } }))
    ).json()) as Json;
    expect(shown.candidates.map((c: Json) => c.index)).toEqual([0, 1]);
    expect(shown.candidates[0].content.parts[0]).toMatchObject({ thought: true });
  });

  it("streams whole responses as data events, usage on the last; a function call carries its thought signature", async () => {
    const res = await generate(gem("x [sim tokens=6 tool_call]", { tools: [{ functionDeclarations: [{ name: "lookup" }] }] }), true);
    const events = (await res.text())
      .split("\n\n")
      .filter(Boolean)
      .map((e) => JSON.parse(e.slice("data: ".length)) as Json);
    expect(events.at(-1)!.candidates[0].finishReason).toBe("STOP");
    expect(events.at(-1)!.usageMetadata.promptTokenCount).toBeGreaterThan(0);
    expect(events.slice(0, -1).every((e) => e.usageMetadata === undefined)).toBe(true);
    const call = events.flatMap((e) => e.candidates[0].content.parts).find((p: Json) => p.functionCall)!;
    expect(call.thoughtSignature).toBe(sign(`lookup\n${JSON.stringify(call.functionCall.args)}`));
  });

  it("calls the named tool as a functionCall with exactly the directive's args, stream and not; refuses an undeclared one", async () => {
    const tools = [{ functionDeclarations: [{ name: "lookup" }, { name: "exec_command", parameters: { type: "object" } }] }];
    const args = { cmd: "echo done > out.txt" };
    const body = gem(`run [sim tool_call=exec_command args=${b64url(args)}]`, { tools, generationConfig: { thinkingConfig: { thinkingBudget: 0 } } });
    const r = (await (await generate(body)).json()) as Json;
    expect(r.candidates[0].content.parts).toEqual([
      { functionCall: { name: "exec_command", args }, thoughtSignature: sign(`exec_command\n${JSON.stringify(args)}`) },
    ]);
    const events = (await (await generate(body, true)).text())
      .split("\n\n")
      .filter(Boolean)
      .map((e) => JSON.parse(e.slice("data: ".length)) as Json);
    const calls = events.flatMap((e) => e.candidates[0].content.parts).filter((p: Json) => p.functionCall);
    expect(calls.map((p: Json) => p.functionCall)).toEqual([{ name: "exec_command", args }]);
    const undeclared = await generate(gem(`run [sim tool_call=Bash args=${b64url(args)}]`, { tools }));
    expect(undeclared.status).toBe(400);
    expect(await undeclared.json()).toEqual({ error: { code: 400, message: expect.stringContaining('"Bash"'), status: "INVALID_ARGUMENT" } });
  });

  it("answers text when the conversation ends with a functionResponse, though it holds the directive; a call when text follows it", async () => {
    const args = { cmd: "ls" };
    const ask = `run [sim tool_call=exec_command args=${b64url(args)}]`;
    const body = (last: Json[]) =>
      gem(ask, {
        tools: [{ functionDeclarations: [{ name: "exec_command" }] }],
        contents: [
          { role: "user", parts: [{ text: ask }] },
          { role: "model", parts: [{ functionCall: { name: "exec_command", args }, thoughtSignature: sign(`exec_command\n${JSON.stringify(args)}`) }] },
          { role: "user", parts: last },
        ],
      });
    // The response itself holds the directive (a command that echoed the prompt): still the loop's end.
    const r = (await (await generate(body([{ functionResponse: { name: "exec_command", response: { output: `echo: ${ask}` } } }]))).json()) as Json;
    expect(r.candidates[0].finishReason).toBe("STOP");
    expect(r.candidates[0].content.parts.every((p: Json) => typeof p.text === "string")).toBe(true);
    // The user's next words after the response ask again: a call.
    const again = (await (
      await generate(body([{ functionResponse: { name: "exec_command", response: { output: "out.txt" } } }, { text: ask }]))
    ).json()) as Json;
    expect(again.candidates[0].content.parts.some((p: Json) => p.functionCall)).toBe(true);
  });

  it.each([
    [{ "content-type": "application/json" }, gem("x"), 403, "PERMISSION_DENIED"],
    [undefined, { ...gem("x"), n: 2 }, 400, "INVALID_ARGUMENT"],
    [undefined, gem("x [sim status=429]"), 429, "RESOURCE_EXHAUSTED"],
    [undefined, gem("x [sim status=503]"), 503, "UNAVAILABLE"],
  ])("refuses in Gemini's error shape (%#)", async (headers, body, status, name) => {
    const res = await generate(body, false, headers);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ error: { code: status, message: expect.any(String), status: name } });
  });

  it("refuses a function call whose thought signature changed", async () => {
    const turn = (signature: string) =>
      gem("x", {
        contents: [
          { role: "user", parts: [{ text: "q" }] },
          { role: "model", parts: [{ functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: signature }] },
          { role: "user", parts: [{ functionResponse: { name: "f", response: { ok: true } } }] },
        ],
      });
    expect((await generate(turn(sign(`f\n${JSON.stringify({ a: 1 })}`)))).status).toBe(200);
    expect((await generate(turn("tampered"))).status).toBe(400);
  });

  it("an implicit cache: a long prefix seen before is read (OpenAI in 128-token steps)", async () => {
    await fetch(`${sim.url}/__sim/cache`, { method: "DELETE" });
    const history = [
      { role: "user", parts: [{ text: "context ".repeat(1100) }] },
      { role: "model", parts: [{ text: "ok" }] },
    ];
    const ask = (q: string) => gem("", { contents: [...history, { role: "user", parts: [{ text: q }] }] });
    const first = (await (await generate(ask("one"))).json()) as Json;
    const second = (await (await generate(ask("two"))).json()) as Json;
    expect(first.usageMetadata.cachedContentTokenCount).toBeUndefined();
    expect(second.usageMetadata.cachedContentTokenCount).toBe(1101);
    const chat = (q: string) =>
      fetch(`${sim.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "gpt-5",
          messages: [
            { role: "user", content: "context ".repeat(1100) },
            { role: "assistant", content: "ok" },
            { role: "user", content: q },
          ],
        }),
      }).then((r) => r.json() as Promise<Json>);
    await chat("one");
    expect((await chat("two")).usage.prompt_tokens_details).toEqual({ cached_tokens: 1024 });
  });
});

describe("simulator: tool calls and results pair up, or the carrier refuses the history (400)", () => {
  const chat = (messages: Json[]) =>
    fetch(`${sim.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-5-mini", messages }),
      signal: AbortSignal.timeout(5000),
    });
  const call = (id: string) => ({ id, type: "function", function: { name: "f", arguments: "{}" } });

  it("OpenAI chat: each tool_calls id answered by a tool message right after, and no tool message without its call", async () => {
    const ask = { role: "user", content: "q" };
    const asked = { role: "assistant", content: null, tool_calls: [call("c1"), call("c2")] };
    const result = (id: string) => ({ role: "tool", tool_call_id: id, content: "ok" });
    expect((await chat([ask, asked, result("c1"), result("c2"), ask])).status).toBe(200);
    for (const history of [
      [ask, asked, result("c1"), ask], // c2 unanswered
      [ask, asked, ask, result("c1"), result("c2")], // not right after
      [ask, asked, result("c1"), result("c2"), result("c3")], // no such call
      [ask, result("c1")],
    ]) {
      const res = await chat(history);
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error.type).toBe("invalid_request_error");
    }
  });

  it("Anthropic: each tool_use answered by a tool_result in the next message, each tool_result by a tool_use before it", async () => {
    const use = { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }] };
    const result = (id: string) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] });
    expect((await messages(claude("x", { messages: [{ role: "user", content: "q" }, use, result("toolu_1")] }))).status).toBe(200);
    for (const history of [
      [{ role: "user", content: "q" }, use, { role: "user", content: "no result" }],
      [{ role: "user", content: "q" }, use, result("toolu_2")],
      [result("toolu_1")],
    ]) {
      const res = await messages(claude("x", { messages: history }));
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining("tool_") } });
    }
  });

  it("Gemini: a functionResponse turn right after the functionCall turn, as many responses as calls", async () => {
    const calls = { role: "model", parts: [{ functionCall: { name: "f", args: {} } }, { functionCall: { name: "g", args: {} } }] };
    const responses = (n: number) => ({ role: "user", parts: Array.from({ length: n }, (_, i) => ({ functionResponse: { name: "fg"[i], response: {} } })) });
    expect((await generate(gem("x", { contents: [{ role: "user", parts: [{ text: "q" }] }, calls, responses(2)] }))).status).toBe(200);
    for (const contents of [
      [{ role: "user", parts: [{ text: "q" }] }, calls, responses(1)],
      [{ role: "user", parts: [{ text: "q" }] }, calls, { role: "user", parts: [{ text: "no response" }] }],
      [responses(1)],
    ]) {
      const res = await generate(gem("x", { contents }));
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error.status).toBe("INVALID_ARGUMENT");
    }
  });
});
