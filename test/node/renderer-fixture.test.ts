import { describe, it, expect } from "vitest";
import { anthropicMessages } from "../../src/protocols/outbound/anthropic";
import { parseChatRequest } from "../../src/request/chat-request";
import { CHUNKS, CREATED, WIRE } from "./renderer-fixture";

// The renderers' table tests (./renderer-*.test.ts) start from canonical chunks: these are the ones the
// Anthropic carrier decodes from the wire fixture, so the tables follow what a carrier really sends.
describe("the renderers' fixture", () => {
  it("is what the Anthropic carrier decodes from its wire stream (the time of `created` aside)", () => {
    const decoder = anthropicMessages.streamDecoder(parseChatRequest({ model: "a/b", messages: [{ role: "user", content: "x" }] }))!;
    const decoded = WIRE.flatMap((e) => {
      const data = JSON.stringify(e);
      return decoder({ data, bytes: data.length });
    }).map((e) => e.data.replace(/"created":\d+/, `"created":${CREATED}`));
    expect(decoded).toEqual([...Object.values(CHUNKS).map((c) => c.data), "[DONE]"]);
  });
});
