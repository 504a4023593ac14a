import { describe, it, expect } from "vitest";
import { messagesStream, type MessagesState } from "../../src/protocols/inbound/anthropic-messages/stream";
import type { ChunkFailure, StreamSummary } from "../../src/protocols/inbound/caller-protocol";
import type { SseEvent } from "../../src/http/sse-parser";
import type { OutputMeter } from "../../src/request/token-estimate";
import { CHUNKS, USAGE, deepFreeze, facts, sse, step } from "./renderer-fixture";

// The Messages renderer as a pure function, as a table: a state and a canonical chunk in
// (./renderer-fixture.ts), Anthropic's events and the next state out. Each row's state in is a state
// an earlier row gave out, so the table reads as the fixture's stream.
const renderer = messagesStream(facts());
/** Who signed the carrier's thinking, ahead of its signature (src/protocols/inbound/anthropic-messages/signature-origin.ts). */
const BY_CLAUDE_X = "swyo1.eyJieSI6ImNsYXVkZS14In0.";
const NO_TOOLS: MessagesState["tools"] = new Map();
const TOOL: { kind: "tool_use"; index: number } = { kind: "tool_use", index: 3 };

const M0 = renderer.initial;
const M1: MessagesState = { started: true, open: null, next: 0, tools: NO_TOOLS };
const M2: MessagesState = { started: true, open: { kind: "thinking", index: 0 }, next: 1, tools: NO_TOOLS };
const M3: MessagesState = { started: true, open: null, next: 2, tools: NO_TOOLS };
const M4: MessagesState = { started: true, open: { kind: "text", index: 2 }, next: 3, tools: NO_TOOLS };
const M5: MessagesState = { started: true, open: TOOL, next: 4, tools: new Map([[0, TOOL]]) };

const start = (index: number, content_block: Record<string, unknown>) => sse("content_block_start", { type: "content_block_start", index, content_block });
const delta = (index: number, d: Record<string, unknown>) => sse("content_block_delta", { type: "content_block_delta", index, delta: d });
const stop = (index: number) => sse("content_block_stop", { type: "content_block_stop", index });
const PING = sse("ping", { type: "ping" });
const MESSAGE_START =
  sse("message_start", {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "m/x",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    },
  }) + PING;

describe("Messages renderer: rewrite", () => {
  it.each<[string, MessagesState, SseEvent, string, MessagesState]>([
    ["the first chunk opens the message", M0, CHUNKS.role, MESSAGE_START, M1],
    [
      "thinking opens a thinking block",
      M1,
      CHUNKS.thinking,
      start(0, { type: "thinking", thinking: "", signature: "" }) + delta(0, { type: "thinking_delta", thinking: "hmm" }),
      M2,
    ],
    ["its signature, with who signed it", M2, CHUNKS.signature, delta(0, { type: "signature_delta", signature: `${BY_CLAUDE_X}sig/+=` }), M2],
    [
      "redacted thinking: a block of its own, opened and closed",
      M2,
      CHUNKS.redacted,
      stop(0) + start(1, { type: "redacted_thinking", data: `${BY_CLAUDE_X}REDACTED==` }) + stop(1),
      M3,
    ],
    ["text opens a text block", M3, CHUNKS.text, start(2, { type: "text", text: "" }) + delta(2, { type: "text_delta", text: 'Hi "there"\n' }), M4],
    [
      "a tool call closes it and opens its tool_use block",
      M4,
      CHUNKS.toolStart,
      stop(2) + start(3, { type: "tool_use", id: "toolu_1", name: "f", input: {} }),
      M5,
    ],
    ["its arguments", M5, CHUNKS.toolArgs, delta(3, { type: "input_json_delta", partial_json: '{"a":' }), M5],
    ["its arguments' end", M5, CHUNKS.toolArgsEnd, delta(3, { type: "input_json_delta", partial_json: "1}" }), M5],
    ["the finish: nothing until the end", M5, CHUNKS.finish, "", M5],
    ["the usage: nothing until the end", M5, CHUNKS.usage, "", M5],
  ])("%s", (_name, state, chunk, text, next) => {
    expect(step(renderer, state, chunk)).toEqual({ text, state: next });
  });

  it("a second tool call closes the first's block and opens its own", () => {
    const second: { kind: "tool_use"; index: number } = { kind: "tool_use", index: 4 };
    const call = { data: `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"toolu_2","function":{"name":"g","arguments":"{}"}}]}}]}`, bytes: 0 };
    expect(step(renderer, M5, call)).toEqual({
      text: stop(3) + start(4, { type: "tool_use", id: "toolu_2", name: "g", input: {} }) + delta(4, { type: "input_json_delta", partial_json: "{}" }),
      state: {
        started: true,
        open: second,
        next: 5,
        tools: new Map([
          [0, TOOL],
          [1, second],
        ]),
      },
    });
  });

  it("a chunk of another choice: nothing (the caller is answered the first)", () => {
    const other = { data: `{"choices":[{"index":1,"delta":{"content":"no"}}]}`, bytes: 0 };
    expect(step(renderer, M4, other)).toEqual({ text: "", state: M4 });
  });
});

describe("Messages renderer: keep-alive", () => {
  it("a ping once the message is open; the state unchanged", () => {
    expect(renderer.keepalive!(deepFreeze(M5))).toEqual({ text: PING, state: M5 });
  });
  it("before the first chunk: the message's opening (with its ping)", () => {
    expect(renderer.keepalive!(M0)).toEqual({ text: MESSAGE_START, state: M1 });
  });
});

describe("Messages renderer: end", () => {
  const meter = { completionTokens: () => 7 } as unknown as OutputMeter;
  const usage = { input_tokens: 12, cache_creation_input_tokens: 20, cache_read_input_tokens: 100, output_tokens: 30 };
  const estimated = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7 };
  const messageDelta = (stop_reason: string, u: Record<string, unknown>) =>
    sse("message_delta", { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: u });
  const STOP = sse("message_stop", { type: "message_stop" });
  it.each<[string, MessagesState, ChunkFailure | null, StreamSummary, string]>([
    [
      "finish: the open block closed, the stop reason and usage",
      M5,
      null,
      { usage: USAGE, finishReason: "tool_calls", output: meter },
      stop(3) + messageDelta("tool_use", usage) + STOP,
    ],
    ["no usage: the estimate of the output", M1, null, { usage: undefined, finishReason: "stop", output: meter }, messageDelta("end_turn", estimated) + STOP],
    [
      "nothing came: the message opened and ended",
      M0,
      null,
      { usage: undefined, finishReason: "length", output: meter },
      MESSAGE_START + messageDelta("max_tokens", estimated) + STOP,
    ],
    [
      "error end: the open block closed, an error event",
      M4,
      { status: 502, message: "lost" },
      { usage: undefined, finishReason: null, output: meter },
      stop(2) + sse("error", { type: "error", error: { type: "api_error", message: "lost" } }),
    ],
    [
      "an overloaded carrier",
      M1,
      { status: 529, message: "busy" },
      { usage: undefined, finishReason: null, output: meter },
      sse("error", { type: "error", error: { type: "overloaded_error", message: "busy" } }),
    ],
  ])("%s", (_name, state, failure, summary, text) => {
    expect(renderer.end(deepFreeze(state), failure, summary)).toBe(text);
  });

  it("with the routing metadata asked for, in message_stop", () => {
    const r = messagesStream({ ...facts(), metadata: () => ({ a: 1 }) });
    expect(r.end(M1, null, { usage: USAGE, finishReason: "stop", output: meter })).toBe(
      messageDelta("end_turn", usage) + sse("message_stop", { type: "message_stop", openrouter_metadata: { a: 1 } }),
    );
  });
});
