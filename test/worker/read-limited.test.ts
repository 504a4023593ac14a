import { describe, it, expect } from "vitest";
import { readBodyLimited } from "../../src/http/read-limited";

/** A body without Content-Length, arriving in the given pieces. */
function chunked(pieces: Uint8Array[]): Response {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(p);
      controller.close();
    },
  });
  return new Response(stream);
}

describe("reading a body without Content-Length within a limit", () => {
  const bytes = new TextEncoder().encode('{"text":"héllo 世界 🚂 done"}');

  it("decodes characters split across reads, and reports the byte length", async () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const res = chunked([bytes.slice(0, cut), bytes.slice(cut)]);
      expect(res.headers.get("content-length")).toBeNull();
      expect(await readBodyLimited(res, 1000)).toEqual({ text: '{"text":"héllo 世界 🚂 done"}', bytes: bytes.length });
    }
  });

  it("refuses a body one byte over the limit and accepts one at it", async () => {
    expect(await readBodyLimited(chunked([bytes.slice(0, 10), bytes.slice(10)]), bytes.length - 1)).toBe("too_large");
    expect(await readBodyLimited(chunked([bytes.slice(0, 10), bytes.slice(10)]), bytes.length)).toMatchObject({ bytes: bytes.length });
  });
});
