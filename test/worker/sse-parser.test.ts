import { describe, it, expect } from "vitest";
import { SseParser } from "../../src/http/sse-parser";
import { textPieces } from "../../src/relay/text-pieces";

const bytes = (s: string) => new TextEncoder().encode(s);
const MiB = 1024 * 1024;

describe("SSE parser", () => {
  it("handles events split across reads, CRLF, comments and multi-line data", () => {
    const p = new SseParser(MiB);
    expect(p.push(bytes('data: {"a"'))).toEqual([]);
    expect(p.push(bytes(":1}\r\n\r\n: comment\nevent: x\ndata: line1\ndata: line2\n\n"))).toEqual([
      { data: '{"a":1}', bytes: 7 },
      { data: "line1\nline2", bytes: 11 },
    ]);
    expect(p.push(bytes("data: [DONE]"))).toEqual([]);
    expect(p.end()).toEqual([{ data: "[DONE]", bytes: 6 }]);
  });

  it("gives the same events and UTF-8 byte counts wherever the reads split, inside characters too", () => {
    const stream = bytes('data: {"c":"héllo 世界 🚂"}\n\n:ping\r\ndata:x\r\n\r\ndata: {"c":"end"}\n\n');
    const whole = new SseParser(MiB).push(stream);
    expect(whole).toEqual([
      { data: '{"c":"héllo 世界 🚂"}', bytes: 26 },
      { data: "x", bytes: 1 },
      { data: '{"c":"end"}', bytes: 11 },
    ]);
    for (let cut = 1; cut < stream.length; cut++) {
      const p = new SseParser(MiB);
      // The relay reuses its read buffer: the parser must not keep views of an earlier read.
      const buffer = new Uint8Array(stream.length);
      buffer.set(stream.subarray(0, cut));
      const first = p.push(buffer.subarray(0, cut));
      buffer.fill(0);
      buffer.set(stream.subarray(cut));
      expect([...first, ...p.push(buffer.subarray(0, stream.length - cut)), ...p.end()]).toEqual(whole);
    }
  });

  it("cuts off a line longer than the event limit as soon as it passes the limit, without waiting for its end", () => {
    const p = new SseParser(1000);
    expect(p.push(bytes('data: {"ok":1}\n\ndata: "' + "x".repeat(500)))).toEqual([{ data: '{"ok":1}', bytes: 8 }]);
    expect(p.overflow).toBe(false);
    expect(p.push(bytes("x".repeat(600)))).toEqual([]);
    expect(p.overflow).toBe(true);
    // Nothing after the cut is parsed: the stream must end with an error.
    expect(p.push(bytes('"\n\ndata: {"late":1}\n\n'))).toEqual([]);
    expect(p.end()).toEqual([]);
  });

  it("counts every data line of one event against the limit", () => {
    const p = new SseParser(100);
    const line = "data: " + "y".repeat(40) + "\n";
    expect(p.push(bytes(line + line))).toEqual([]);
    expect(p.overflow).toBe(false);
    expect(p.push(bytes(line))).toEqual([]);
    expect(p.overflow).toBe(true);
  });

  it("accepts an event of exactly the limit", () => {
    const p = new SseParser(100);
    expect(p.push(bytes(`data: ${"z".repeat(100)}\n\n`))).toEqual([{ data: "z".repeat(100), bytes: 100 }]);
    expect(p.overflow).toBe(false);
  });
});

describe("writing in pieces", () => {
  it("cuts text into bounded pieces that join back to it, never inside a surrogate pair", () => {
    const text = "ab🚂cd🚂🚂e".repeat(50);
    for (const max of [1, 2, 3, 5, 7, 64]) {
      const pieces = textPieces(text, max);
      expect(pieces.join("")).toBe(text);
      for (const p of pieces) {
        expect(p.length).toBeLessThanOrEqual(Math.max(max, 2));
        expect(new TextDecoder().decode(new TextEncoder().encode(p))).toBe(p); // valid UTF-8 on its own
      }
    }
    expect(textPieces("short", 10)).toEqual(["short"]);
  });
});
