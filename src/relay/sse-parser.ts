/** One server-sent event's `data` (its data lines joined by "\n") and its size in UTF-8 bytes. */
export type SseEvent = { data: string; bytes: number };

const LF = 10;
const CR = 13;
const SPACE = 32;
const DATA = [100, 97, 116, 97, 58]; // "data:"
/** A line still arriving may hold its `data: ` prefix on top of the limit. */
const PREFIX_SLACK = 6;

/**
 * Incremental server-sent-events parser over bytes: feed each read as it arrives, get back every
 * completed event. Each byte is scanned once (a line split across reads is kept in pieces, joined
 * once when it ends), so the work is linear in the stream's size. An event — its data lines, or any
 * single line — larger than `maxEventBytes` sets `overflow` as soon as it passes the limit, without
 * waiting for (or holding) the rest; nothing is parsed after that. Comments, `event:`/`id:` fields
 * and junk lines are dropped.
 */
export class SseParser {
  overflow = false;
  /** Copies of the current line's bytes from earlier reads (the caller reuses its read buffer). */
  private pieces: Uint8Array[] = [];
  private pieceBytes = 0;
  private data: string[] = [];
  private dataBytes = 0;
  private readonly decoder = new TextDecoder();

  constructor(private readonly maxEventBytes: number) {}

  push(chunk: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    while (!this.overflow) {
      const nl = chunk.indexOf(LF, start);
      if (nl < 0) break;
      this.line(chunk.subarray(start, nl), events);
      start = nl + 1;
    }
    const rest = chunk.length - start;
    if (this.overflow || rest === 0) return events;
    if (this.dataBytes + this.pieceBytes + rest > this.maxEventBytes + PREFIX_SLACK) return this.cut(events);
    this.pieces.push(chunk.slice(start));
    this.pieceBytes += rest;
    return events;
  }

  /** Whatever complete event is pending when the stream ends without a final blank line. */
  end(): SseEvent[] {
    return this.push(new Uint8Array([LF, LF]));
  }

  private line(tail: Uint8Array, events: SseEvent[]): void {
    let line = tail;
    if (this.pieces.length > 0) {
      line = new Uint8Array(this.pieceBytes + tail.length);
      let offset = 0;
      for (const p of this.pieces) {
        line.set(p, offset);
        offset += p.length;
      }
      line.set(tail, offset);
      this.pieces = [];
      this.pieceBytes = 0;
    }
    let end = line.length;
    if (end > 0 && line[end - 1] === CR) end--;
    if (end === 0) {
      if (this.data.length > 0) events.push({ data: this.data.length === 1 ? this.data[0]! : this.data.join("\n"), bytes: this.dataBytes });
      this.data = [];
      this.dataBytes = 0;
      return;
    }
    if (end < 5 || line[0] !== DATA[0] || line[1] !== DATA[1] || line[2] !== DATA[2] || line[3] !== DATA[3] || line[4] !== DATA[4]) {
      if (end > this.maxEventBytes + PREFIX_SLACK) this.cut(events);
      return;
    }
    const from = line[5] === SPACE ? 6 : 5;
    const size = this.dataBytes + (this.data.length > 0 ? 1 : 0) + Math.max(0, end - from);
    if (size > this.maxEventBytes) {
      this.cut(events);
      return;
    }
    this.data.push(from >= end ? "" : this.decoder.decode(line.subarray(from, end)));
    this.dataBytes = size;
  }

  private cut(events: SseEvent[]): SseEvent[] {
    this.overflow = true;
    this.pieces = [];
    this.data = [];
    return events;
  }
}
