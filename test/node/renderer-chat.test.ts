import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chunkRewriter, type ChatStreamState } from "../../src/protocols/inbound/openai-chat/chunk-rewriter";
import type { ReadChunk } from "../../src/protocols/inbound/caller-protocol";
import type { SseEvent } from "../../src/http/sse-parser";
import { OutputMeter } from "../../src/request/token-estimate";
import { CHUNKS, CREATED, HEAD, USAGE, deepFreeze, parsed, step } from "./renderer-fixture";

// The chat renderer as a pure function, as a table: a state and a canonical chunk in (./renderer-fixture.ts),
// the caller's text and the next state out.
const endpoint = { ...Catalog.parse(catalogJson).endpoints("anthropic/claude-sonnet-4.5")[0]!, outputNano: 15_000 };
const renderer = chunkRewriter("gen-1", "m/x", "P", endpoint, { created: CREATED, metadata: () => null });
const OURS = `{"id":"gen-1","object":"chat.completion.chunk","created":${CREATED},"model":"m/x","provider":"P"`;
const HEADED: ChatStreamState = { upstreamHead: HEAD, ourHead: OURS };
const UNPARSED: ReadChunk = { json: null, usage: undefined, shown: undefined };
const event = (data: string): SseEvent => ({ data, bytes: data.length });
const summary = { usage: USAGE, finishReason: "tool_calls", output: new OutputMeter() };

describe("chat renderer: rewrite", () => {
  it("starts knowing no carrier head, and has no keep-alive", () => {
    expect(renderer.initial).toEqual({ upstreamHead: null, ourHead: "" });
    expect(renderer.keepalive).toBeUndefined();
  });

  it("the first chunk: parsed, named ours (provider last, as added) and its head learnt", () => {
    expect(renderer.plain!(renderer.initial, CHUNKS.role.data)).toBeNull();
    expect(step(renderer, renderer.initial, CHUNKS.role)).toEqual({
      state: HEADED,
      text: `data: ${OURS.slice(0, OURS.indexOf(',"provider"'))},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"provider":"P"}\n\n`,
    });
  });

  it.each(["thinking", "signature", "redacted", "text", "toolStart", "toolArgs", "toolArgsEnd", "finish"] as const)(
    "%s: once the head is known, swapped for ours unparsed; the state unchanged",
    (kind) => {
      const { data } = CHUNKS[kind];
      const rest = renderer.plain!(deepFreeze(HEADED), data);
      expect(rest).toBe(data.slice(HEAD.length));
      const out = step(renderer, HEADED, CHUNKS[kind], UNPARSED);
      expect(out.text).toBe(`data: ${OURS}${rest}\n\n`);
      expect(out.state).toBe(HEADED);
    },
  );

  it("usage: parsed, with what it shows the caller it costs", () => {
    expect(renderer.plain!(HEADED, CHUNKS.usage.data)).toBeNull();
    const out = step(renderer, HEADED, CHUNKS.usage, parsed(CHUNKS.usage, USAGE, { costNano: 1_500_000, insured: false, cacheDiscountNano: 0 }));
    expect(out.state).toBe(HEADED);
    const usage = {
      prompt_tokens: 132,
      completion_tokens: 30,
      total_tokens: 162,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 1 },
      cost: 0.0015,
      cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.00105, upstream_inference_completions_cost: 0.00045 },
    };
    expect(out.text).toBe(`data: ${OURS.slice(0, OURS.indexOf(',"provider"'))},"choices":[],"usage":${JSON.stringify(usage)},"provider":"P"}\n\n`);
  });

  it.each<[string, string, string]>([
    [
      "no finish_reason: parsed, and given one (null)",
      `,"choices":[{"index":0,"delta":{"content":"x"}}]}`,
      `,"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]`,
    ],
    [
      "a null system_fingerprint: parsed, and left out",
      `,"system_fingerprint":null,"choices":[{"index":0,"delta":{},"finish_reason":null}]}`,
      `,"choices":[{"index":0,"delta":{},"finish_reason":null}]`,
    ],
    [
      "its own provider later on: parsed, so no key is sent twice",
      `,"choices":[{"index":0,"delta":{},"finish_reason":null}],"provider":"Up"}`,
      `,"choices":[{"index":0,"delta":{},"finish_reason":null}]`,
    ],
  ])("a chunk the swap cannot take, %s", (_name, rest, rewritten) => {
    const e = event(HEAD + rest);
    expect(renderer.plain!(HEADED, e.data)).toBeNull();
    expect(step(renderer, HEADED, e)).toEqual({ state: HEADED, text: `data: ${OURS.slice(0, OURS.indexOf(',"provider"'))}${rewritten},"provider":"P"}\n\n` });
  });

  it("a first chunk without the usual head: rewritten parsed, no head learnt", () => {
    const e = event(`{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`);
    const out = step(renderer, renderer.initial, e);
    expect(out.state).toBe(renderer.initial);
    expect(out.text).toBe(`data: {"id":"gen-1","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"model":"m/x","provider":"P"}\n\n`);
  });
});

describe("chat renderer: end", () => {
  const head = `{"id":"gen-1","object":"chat.completion.chunk","created":${CREATED},"model":"m/x","provider":"P"`;
  it.each<[string, ChatStreamState, { status: number; message: string } | null, Record<string, unknown> | null, string]>([
    ["finish: [DONE]", HEADED, null, null, "data: [DONE]\n\n"],
    [
      "error end: OpenRouter's error chunk, then [DONE]",
      HEADED,
      { status: 502, message: "lost" },
      null,
      `data: ${head},"error":{"code":502,"message":"lost"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n\ndata: [DONE]\n\n`,
    ],
    [
      "routing metadata asked for: a chunk of its own first",
      renderer.initial,
      null,
      { a: 1 },
      `data: ${head},"choices":[],"openrouter_metadata":{"a":1}}\n\ndata: [DONE]\n\n`,
    ],
  ])("%s", (_name, state, failure, metadata, text) => {
    const r = chunkRewriter("gen-1", "m/x", "P", endpoint, { created: CREATED, metadata: () => metadata });
    expect(r.end(deepFreeze(state), failure, summary)).toBe(text);
  });
});
