import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../simulator/server";

// The simulator's OpenAI Responses protocol over real HTTP (answers, typed stream events, usage with cached
// and reasoning tokens, sealed reasoning checked when it comes back), and its Chat Completions protocol
// refusing, as OpenAI does, function tools with reasoning on the GPT-6 family.
type Json = Record<string, any>;
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ profiles: "off" });
});
afterAll(() => sim.close());

const post = (path: string, body: Json) =>
  fetch(`${sim.url}/openai/v1/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
const TOOL = { type: "function", name: "shell", parameters: { type: "object", properties: { cmd: { type: "string" } } }, strict: false };
const ask = (text: string, extra: Json = {}) => ({
  model: "gpt-6.1-sol",
  store: false,
  input: [{ type: "message", role: "user", content: [{ type: "input_text", text }] }],
  reasoning: { effort: "medium", summary: "auto" },
  include: ["reasoning.encrypted_content"],
  ...extra,
});

describe("simulator: OpenAI Responses", () => {
  it("answers a response: a reasoning item (summary, sealed content), the message, usage with cached and reasoning tokens", async () => {
    const res = await post("responses", ask("hi [sim tokens=6 cache_read=2]"));
    expect(res.status).toBe(200);
    const r = (await res.json()) as Json;
    expect(r).toMatchObject({ object: "response", status: "completed", model: "gpt-6.1-sol", store: false });
    expect(r.output.map((i: Json) => i.type)).toEqual(["reasoning", "message"]);
    expect(r.output[0]).toMatchObject({ summary: [{ type: "summary_text", text: expect.any(String) }], encrypted_content: expect.any(String) });
    expect(r.usage.input_tokens_details.cached_tokens).toBe(2);
    expect(r.usage.output_tokens).toBe(6); // reasoning included
    expect(r.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(r.usage.total_tokens).toBe(r.usage.input_tokens + r.usage.output_tokens);
  });

  it("streams typed events with sequence numbers: a tool call's item, its argument deltas, response.completed with the usage", async () => {
    const res = await post("responses", ask("list files [sim tool_call]", { tools: [TOOL], stream: true }));
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split("\n\n")
      .filter(Boolean)
      .map((frame) => {
        const [eventLine, dataLine] = frame.split("\n");
        const data = JSON.parse(dataLine!.slice("data: ".length)) as Json;
        expect(eventLine).toBe(`event: ${data.type}`);
        return data;
      });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]!.type).toBe("response.created");
    const added = events.find((e) => e.type === "response.output_item.added" && e.item.type === "function_call")!;
    expect(added.item).toMatchObject({ name: "shell", arguments: "", call_id: expect.stringMatching(/^call_/) });
    const args = events.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta as string);
    const done = events.find((e) => e.type === "response.function_call_arguments.done")!;
    expect(args.join("")).toBe(done.arguments);
    const completed = events.at(-1)!;
    expect(completed).toMatchObject({ type: "response.completed", response: { status: "completed", usage: { total_tokens: expect.any(Number) } } });
  });

  it("takes its sealed reasoning back unchanged, and refuses it altered; refuses store: true", async () => {
    const first = (await (await post("responses", ask("hi [sim tokens=3]"))).json()) as Json;
    const reasoning = first.output[0];
    const next = (sealed: string) =>
      post(
        "responses",
        ask("again", {
          input: [
            { role: "user", content: "hi" },
            { type: "reasoning", summary: [], encrypted_content: sealed },
            { role: "user", content: "again" },
          ],
        }),
      );
    expect((await next(reasoning.encrypted_content)).status).toBe(200);
    const altered = await next(reasoning.encrypted_content.replace(/^./, (c: string) => (c === "A" ? "B" : "A")));
    expect(altered.status).toBe(400);
    expect(((await altered.json()) as Json).error.message).toMatch(/could not be verified/);
    expect((await post("responses", ask("hi", { store: true }))).status).toBe(400);
  });
});

describe("simulator: OpenAI Chat Completions on the GPT-6 family", () => {
  const chat = (extra: Json) => post("chat/completions", { model: "gpt-6.1-sol", messages: [{ role: "user", content: "hi" }], ...extra });
  const FN = { type: "function", function: { name: "shell", parameters: { type: "object" } } };

  it("refuses function tools with a reasoning effort (or none given), and GPT-6.1 Sol's effort none, as OpenAI does", async () => {
    for (const extra of [{ tools: [FN] }, { tools: [FN], reasoning_effort: "high" }]) {
      const res = await chat(extra);
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error.message).toMatch(
        /Function tools with reasoning_effort are not supported for gpt-6.1-sol in \/v1\/chat\/completions/,
      );
    }
    const none = await chat({ tools: [FN], reasoning_effort: "none" });
    expect(none.status).toBe(400);
    expect(((await none.json()) as Json).error.message).toMatch(/does not support 'none'/);
  });

  it("answers without tools, and other models with tools", async () => {
    expect((await chat({ reasoning_effort: "high" })).status).toBe(200);
    expect(
      (await post("chat/completions", { model: "gpt-5-mini", messages: [{ role: "user", content: "hi" }], tools: [FN], reasoning_effort: "low" })).status,
    ).toBe(200);
  });
});
