import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { charge } from "../../src/request/charge";
import { nanoToUsd } from "../../src/catalog/money";
import { StreamAccount } from "../../src/relay/stream-account";
import { chunkRewriter } from "../../src/protocols/inbound/openai-chat/chunk-rewriter";
import type { SseEvent } from "../../src/http/sse-parser";
import { accounted } from "./accounted-stream";

// The relay's accounting of a stream, whichever way it reads a chunk: parsed, or — for chat's head swap —
// scanned unparsed. Both ways must count the same, or a stream's bill would depend on how its chunks were relayed.
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("anthropic/claude-sonnet-4.5")[0]!;
const event = (fields: Record<string, unknown>): SseEvent => {
  const data = JSON.stringify({ id: "up-1", object: "chat.completion.chunk", created: 1700000000, model: "up-model", ...fields });
  return { data, bytes: new TextEncoder().encode(data).byteLength } as SseEvent;
};
const delta = (d: Record<string, unknown>, finish: string | null = null, index = 0) => ({ index, delta: d, finish_reason: finish });
const STREAM = [
  event({ choices: [delta({ role: "assistant", content: "" })] }),
  event({ choices: [delta({ reasoning: "think ✓" })] }),
  event({ choices: [delta({ content: 'd’accord "quoted"\n' })] }),
  event({ choices: [delta({ tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: '{"a":1}' } }] })] }),
  event({ choices: [delta({}, "stop")] }),
  event({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 7 } }),
];
const totals = (a: StreamAccount) => ({
  upstreamId: a.upstreamId,
  usage: a.usage,
  shown: a.shown,
  finishReason: a.finishReason,
  finished: a.finished,
  output: { ...a.output },
  firstToken: a.firstTokenAt !== null,
});

describe("StreamAccount", () => {
  it("counts a chat stream rewritten by head swap as it counts the same chunks parsed", () => {
    const swapped = accounted(chunkRewriter("gen-1", "m", "P", endpoint), endpoint, "P");
    for (const e of STREAM) expect(typeof swapped.rewrite(e)).toBe("string");
    const parsed = new StreamAccount(endpoint, "P", "all");
    for (const e of STREAM) parsed.read(e, null);
    expect(totals(swapped.account)).toEqual(totals(parsed));
    expect(parsed.output.events).toBe(3);
    expect(parsed.finishReason).toBe("stop");
    expect(parsed.usage).toMatchObject({ promptTokens: 12, completionTokens: 7 });
    expect(parsed.shown).toEqual(charge(parsed.usage!, endpoint, "stop", false));
  });

  it("hands the renderer the usage a chunk carried and the cost it shows; the chat chunk shows that cost", () => {
    const s = accounted(chunkRewriter("gen-1", "m", "P", endpoint), endpoint, "P");
    let last = "";
    for (const e of STREAM) last = s.rewrite(e) as string;
    const shown = JSON.parse(last.slice("data: ".length)) as { usage: { cost: number } };
    expect(shown.usage.cost).toBe(nanoToUsd(s.account.shown!.costNano));
  });

  it("counts every choice for chat, only the first for protocols that answer one", () => {
    const two = event({ choices: [delta({ content: "a" }, "stop", 0), delta({ content: "b" }, "length", 1)] });
    const all = new StreamAccount(endpoint, "P", "all");
    const first = new StreamAccount(endpoint, "P", "first");
    all.read(two, null);
    first.read(two, null);
    expect([all.finished, all.finishReason, all.output.events]).toEqual([2, "length", 2]);
    expect([first.finished, first.finishReason, first.output.events]).toEqual([1, "stop", 1]);
  });

  it("says why the stream must end at a malformed chunk or the carrier's error, naming the carrier", () => {
    const a = new StreamAccount(endpoint, "Acme", "all");
    expect(a.read({ data: "{not json", bytes: 9 } as SseEvent, null)).toEqual({ status: 502, message: "Carrier Acme sent a malformed stream chunk." });
    expect(a.read({ data: "[1]", bytes: 3 } as SseEvent, null)).toEqual({ status: 502, message: "Carrier Acme sent a malformed stream chunk." });
    expect(a.read(event({ error: { message: "overloaded" } }), null)).toEqual({ status: 502, message: "Carrier Acme failed mid-stream: overloaded" });
    expect(a.upstreamId).toBeNull();
  });
});
