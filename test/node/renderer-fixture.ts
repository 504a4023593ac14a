import type { SseEvent } from "../../src/http/sse-parser";
import type { AnswerFacts, ReadChunk, Rendered, StreamRenderer } from "../../src/protocols/inbound/caller-protocol";
import type { CarrierUsage } from "../../src/request/usage";
import type { Charge } from "../../src/request/charge";

// What the renderers' table tests feed them: one wire stream in Anthropic's documented events (every
// block kind: thinking with its signature, redacted thinking, text, a tool call; the stop and the usage)
// and the canonical chunks the Anthropic carrier decodes it into (./renderer-fixture.test.ts
// checks the decoder still gives exactly these), with the time of `created` fixed.
type Json = Record<string, unknown>;

export const WIRE: Json[] = [
  {
    type: "message_start",
    message: {
      id: "msg_7",
      type: "message",
      role: "assistant",
      model: "claude-x",
      content: [],
      stop_reason: null,
      usage: { input_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 1 },
    },
  },
  { type: "ping" },
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
  { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig/+=" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "REDACTED==" } },
  { type: "content_block_stop", index: 1 },
  { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: 'Hi "there"\n' } },
  { type: "content_block_stop", index: 2 },
  { type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_1", name: "f", input: {} } },
  { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: '{"a":' } },
  { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: "1}" } },
  { type: "content_block_stop", index: 3 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 30 } },
  { type: "message_stop" },
];

export const CREATED = 1700000000;
/** The head the carrier gives every chunk of the stream. */
export const HEAD = `{"id":"msg_7","object":"chat.completion.chunk","created":${CREATED},"model":"claude-x"`;
const chunk = (rest: string): SseEvent => {
  const data = `${HEAD},${rest}}`;
  return { data, bytes: data.length };
};
const delta = (d: string, finish = "null") => chunk(`"choices":[{"index":0,"delta":${d},"finish_reason":${finish}}]`);
const ANTHROPIC = '"format":"anthropic-claude-v1"';

/** The canonical chunks of WIRE, in order. */
export const CHUNKS = {
  role: delta('{"role":"assistant","content":""}'),
  thinking: delta(`{"reasoning":"hmm","reasoning_details":[{"type":"reasoning.text","text":"hmm",${ANTHROPIC},"index":0}]}`),
  signature: delta(`{"reasoning_details":[{"type":"reasoning.text","text":"","signature":"sig/+=",${ANTHROPIC},"index":0,"signed_by":"claude-x"}]}`),
  redacted: delta(`{"reasoning_details":[{"type":"reasoning.encrypted","data":"REDACTED==",${ANTHROPIC},"index":1,"signed_by":"claude-x"}]}`),
  text: delta('{"content":"Hi \\"there\\"\\n"}'),
  toolStart: delta('{"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"f","arguments":""}}]}'),
  toolArgs: delta('{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":"}}]}'),
  toolArgsEnd: delta('{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}'),
  finish: delta("{}", '"tool_calls"'),
  usage: chunk(
    '"choices":[],"usage":{"prompt_tokens":132,"completion_tokens":30,"total_tokens":162,"prompt_tokens_details":{"cached_tokens":100,"cache_write_tokens":20},"completion_tokens_details":{"reasoning_tokens":1}}',
  ),
} as const;

/** The usage of CHUNKS.usage as the account reads it. */
export const USAGE: CarrierUsage = {
  promptTokens: 132,
  completionTokens: 30,
  reasoningTokens: 1,
  cachedTokens: 100,
  cacheWriteTokens: 20,
  cacheWrite1hTokens: 0,
};

/** A chunk as the account hands it over parsed (with the usage it carried and what that shows the caller it costs). */
export const parsed = (event: SseEvent, usage?: CarrierUsage, shown?: Charge): ReadChunk => ({ json: JSON.parse(event.data) as Json, usage, shown });

export const facts = (echo: Json = {}): AnswerFacts => ({
  genId: "gen-1",
  model: "m/x",
  provider: "P",
  created: CREATED,
  echo,
  metadata: () => null,
  sealer: null,
});

/** One Anthropic-style SSE event's text. */
export const sse = (type: string, data: Json): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** `value` frozen through and through: a renderer that changed the state it was given would throw. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** One rewrite from a frozen state: what it wrote and the state it gave back. */
export function step<S>(renderer: StreamRenderer<S>, state: S, event: SseEvent, read: ReadChunk = parsed(event)): Rendered<S> {
  return renderer.rewrite(deepFreeze(state), event, read);
}
