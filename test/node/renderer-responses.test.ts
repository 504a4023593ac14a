import { afterEach, beforeEach, describe, it, expect, vi } from "vitest";
import { responsesStream, type ResponsesState } from "../../src/protocols/inbound/openai-responses/stream";
import { responseObject } from "../../src/protocols/inbound/openai-responses/answer";
import type { SseEvent } from "../../src/http/sse-parser";
import type { OutputMeter } from "../../src/request/token-estimate";
import { CHUNKS, USAGE, deepFreeze, facts, step } from "./renderer-fixture";

// The Responses renderer as a pure function, as a table: a state and a canonical chunk in
// (./renderer-fixture.ts), OpenAI's Responses events (numbered on from the state's `seq`) and the next
// state out. Each row's state in is a state an earlier row gave out, so the table reads as the fixture's stream.
type Json = Record<string, unknown>;
const renderer = responsesStream(facts());
const ev = (type: string, seq: number, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`;
/** The canonical details of the fixture's thinking, its signature and its redacted thinking. */
const [THOUGHT, SIGNED, REDACTED] = [CHUNKS.thinking, CHUNKS.signature, CHUNKS.redacted].map(
  (c) => (JSON.parse(c.data) as { choices: [{ delta: { reasoning_details: [Json] } }] }).choices[0].delta.reasoning_details[0],
);
const RS = { kind: "reasoning", index: 0, id: "rs_1_0", raw: false } as const;
const MSG = { kind: "message", index: 1, id: "msg_1_1" } as const;
const FC = { kind: "function_call", index: 2, id: "fc_1_2", toolIndex: 0, callId: "toolu_1", origin: { kind: "function", name: "f" } } as const;
const TEXT = 'Hi "there"\n';
const RS_DONE = { type: "reasoning", id: "rs_1_0", summary: [{ type: "summary_text", text: "hmm" }], status: "completed" };
const outputText = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] });
const MSG_DONE = { type: "message", id: "msg_1_1", status: "completed", role: "assistant", content: [outputText(TEXT)] };
const FC_DONE = { type: "function_call", id: "fc_1_2", call_id: "toolu_1", name: "f", arguments: '{"a":1}', status: "completed" };

const R0 = renderer.initial;
const R1: ResponsesState = { seq: 2, started: true, open: null, items: [], late: null };
const R2: ResponsesState = { ...R1, seq: 5, open: { ...RS, text: "hmm", details: { last: THOUGHT!, before: null } } };
const R3: ResponsesState = { ...R2, open: { ...RS, text: "hmm", details: { last: SIGNED!, before: { last: THOUGHT!, before: null } } } };
const R4: ResponsesState = {
  ...R2,
  open: { ...RS, text: "hmm", details: { last: REDACTED!, before: R3.open!.kind === "reasoning" ? R3.open!.details : null } },
};
const R5: ResponsesState = { seq: 11, started: true, open: { ...MSG, text: TEXT }, items: [RS_DONE], late: null };
const R6: ResponsesState = { seq: 15, started: true, open: { ...FC, args: "" }, items: [RS_DONE, MSG_DONE], late: null };
const R7: ResponsesState = { ...R6, seq: 16, open: { ...FC, args: '{"a":' } };
const R8: ResponsesState = { ...R6, seq: 17, open: { ...FC, args: '{"a":1}' } };

const inProgress = responseObject(facts(), { status: "in_progress", output: [], usage: null, completedAt: null });
const at = (o: { id: string; index: number }) => ({ item_id: o.id, output_index: o.index });

describe("Responses renderer: rewrite", () => {
  it.each<[string, ResponsesState, SseEvent, string, ResponsesState]>([
    [
      "the first chunk: created, in progress",
      R0,
      CHUNKS.role,
      ev("response.created", 0, { response: inProgress }) + ev("response.in_progress", 1, { response: inProgress }),
      R1,
    ],
    [
      "thinking: a reasoning item, its text a summary (the carrier's details describe it)",
      R1,
      CHUNKS.thinking,
      ev("response.output_item.added", 2, { output_index: 0, item: { type: "reasoning", id: "rs_1_0", summary: [], status: "in_progress" } }) +
        ev("response.reasoning_summary_part.added", 3, { ...at(RS), summary_index: 0, part: { type: "summary_text", text: "" } }) +
        ev("response.reasoning_summary_text.delta", 4, { ...at(RS), summary_index: 0, delta: "hmm" }),
      R2,
    ],
    ["its signature: kept in the item's details", R2, CHUNKS.signature, "", R3],
    ["redacted thinking: kept in the item's details", R3, CHUNKS.redacted, "", R4],
    [
      "text: the reasoning item closed, a message opened",
      R4,
      CHUNKS.text,
      ev("response.reasoning_summary_text.done", 5, { ...at(RS), summary_index: 0, text: "hmm" }) +
        ev("response.reasoning_summary_part.done", 6, { ...at(RS), summary_index: 0, part: { type: "summary_text", text: "hmm" } }) +
        ev("response.output_item.done", 7, { output_index: 0, item: RS_DONE }) +
        ev("response.output_item.added", 8, {
          output_index: 1,
          item: { type: "message", id: "msg_1_1", status: "in_progress", role: "assistant", content: [] },
        }) +
        ev("response.content_part.added", 9, { ...at(MSG), content_index: 0, part: outputText("") }) +
        ev("response.output_text.delta", 10, { ...at(MSG), content_index: 0, delta: TEXT, logprobs: [] }),
      R5,
    ],
    [
      "a tool call: the message closed, a function call opened",
      R5,
      CHUNKS.toolStart,
      ev("response.output_text.done", 11, { ...at(MSG), content_index: 0, text: TEXT, logprobs: [] }) +
        ev("response.content_part.done", 12, { ...at(MSG), content_index: 0, part: outputText(TEXT) }) +
        ev("response.output_item.done", 13, { output_index: 1, item: MSG_DONE }) +
        ev("response.output_item.added", 14, {
          output_index: 2,
          item: { type: "function_call", id: "fc_1_2", call_id: "toolu_1", name: "f", arguments: "", status: "in_progress" },
        }),
      R6,
    ],
    ["its arguments", R6, CHUNKS.toolArgs, ev("response.function_call_arguments.delta", 15, { ...at(FC), delta: '{"a":' }), R7],
    ["its arguments' end", R7, CHUNKS.toolArgsEnd, ev("response.function_call_arguments.delta", 16, { ...at(FC), delta: "1}" }), R8],
    ["the finish: nothing until the end", R8, CHUNKS.finish, "", R8],
    ["the usage: nothing until the end", R8, CHUNKS.usage, "", R8],
    ["reasoning after other output: only its details kept, for the end", R5, CHUNKS.redacted, "", { ...R5, late: { last: REDACTED!, before: null } }],
  ])("%s", (_name, state, chunk, text, next) => {
    expect(step(renderer, state, chunk)).toEqual({ text, state: next });
  });

  it("bare reasoning (a carrier's raw chain of thought): the item's reasoning_text part", () => {
    const raw = { data: `{"choices":[{"index":0,"delta":{"reasoning":"so"}}]}`, bytes: 0 };
    expect(step(renderer, R1, raw)).toEqual({
      text:
        ev("response.output_item.added", 2, { output_index: 0, item: { type: "reasoning", id: "rs_1_0", summary: [], status: "in_progress" } }) +
        ev("response.content_part.added", 3, { ...at(RS), content_index: 0, part: { type: "reasoning_text", text: "" } }) +
        ev("response.reasoning_text.delta", 4, { ...at(RS), content_index: 0, delta: "so" }),
      state: { ...R1, seq: 5, open: { ...RS, text: "so", details: null, raw: true } },
    });
  });

  it("has no keep-alive", () => {
    expect(renderer.keepalive).toBeUndefined();
  });
});

describe("Responses renderer: end", () => {
  const NOW = 1_800_000_000;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(NOW * 1000);
  });
  afterEach(() => vi.useRealTimers());
  const meter = { completionTokens: () => 7 } as unknown as OutputMeter;
  const usage = {
    input_tokens: 132,
    input_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
    output_tokens: 30,
    output_tokens_details: { reasoning_tokens: 1 },
    total_tokens: 162,
  };
  const estimated = {
    input_tokens: 0,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 7,
  };
  const response = (fields: Parameters<typeof responseObject>[1]) => responseObject(facts(), fields);

  it("finish: the open item closed, then response.completed with every item and the usage", () => {
    expect(renderer.end(deepFreeze(R8), null, { usage: USAGE, finishReason: "tool_calls", output: meter })).toBe(
      ev("response.function_call_arguments.done", 17, { ...at(FC), name: "f", arguments: '{"a":1}' }) +
        ev("response.output_item.done", 18, { output_index: 2, item: FC_DONE }) +
        ev("response.completed", 19, {
          response: response({ status: "completed", incomplete_details: null, output: [RS_DONE, MSG_DONE, FC_DONE], usage, completedAt: NOW }),
        }),
    );
  });

  it("cut by the token cap, with no usage: response.incomplete with the estimate", () => {
    expect(renderer.end(R1, null, { usage: undefined, finishReason: "length", output: meter })).toBe(
      ev("response.incomplete", 2, {
        response: response({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [], usage: estimated, completedAt: NOW }),
      }),
    );
  });

  it("error end: response.failed, the open item in progress among the output", () => {
    const inProgressMessage = { type: "message", id: "msg_1_1", status: "in_progress", role: "assistant", content: [] };
    const error = { code: "server_error", message: "lost", type: "server_error", param: null };
    expect(renderer.end(deepFreeze(R5), { status: 502, message: "lost" }, { usage: undefined, finishReason: null, output: meter })).toBe(
      ev("response.failed", 11, { response: response({ status: "failed", error, output: [RS_DONE, inProgressMessage], usage: estimated, completedAt: null }) }),
    );
  });
});
