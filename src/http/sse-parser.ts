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
 * completed event. Each byte is scanned once, and a line split across reads is decoded piece by piece
 * as it arrives (never held as bytes and copied again), so the work is linear in the stream's size. An
 * event — its data lines, or any single line — larger than `maxEventBytes` sets `overflow` as soon as
 * it passes the limit, without waiting for (or holding) the rest; nothing is parsed after that.
 * Comments, `event:`/`id:` fields and junk lines are dropped.
 */
export class SseParser {
  overflow = false;
  /** The current line's text from earlier reads, and its size in bytes (0: no line pending). */
  private pendingText = "";
  private pendingBytes = 0;
  private data: string[] = [];
  private dataBytes = 0;
  private readonly decoder = new TextDecoder();
  private readonly lineDecoder = new TextDecoder();

  constructor(private readonly maxEventBytes: number) {}

  push(chunk: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    while (!this.overflow) {
      const nl = chunk.indexOf(LF, start);
      if (nl < 0) break;
      if (this.pendingBytes === 0) this.lineBytes(chunk.subarray(start, nl), events);
      else this.lineText(chunk.subarray(start, nl), events);
      start = nl + 1;
    }
    const rest = chunk.length - start;
    if (this.overflow || rest === 0) return events;
    if (this.dataBytes + this.pendingBytes + rest > this.maxEventBytes + PREFIX_SLACK) return this.cut(events);
    this.pendingText += this.lineDecoder.decode(chunk.subarray(start), { stream: true });
    this.pendingBytes += rest;
    return events;
  }

  /** Whatever complete event is pending when the stream ends without a final blank line. */
  end(): SseEvent[] {
    return this.push(new Uint8Array([LF, LF]));
  }

  /** A line that arrived in one read: checked as bytes, only its data decoded. */
  private lineBytes(line: Uint8Array, events: SseEvent[]): void {
    let end = line.length;
    if (end > 0 && line[end - 1] === CR) end--;
    if (end === 0) return this.dispatch(events);
    if (end < 5 || line[0] !== DATA[0] || line[1] !== DATA[1] || line[2] !== DATA[2] || line[3] !== DATA[3] || line[4] !== DATA[4]) {
      if (end > this.maxEventBytes + PREFIX_SLACK) this.cut(events);
      return;
    }
    const from = line[5] === SPACE ? 6 : 5;
    this.addData(from >= end ? "" : this.decoder.decode(line.subarray(from, end)), Math.max(0, end - from), events);
  }

  /** The end of a line whose start came in earlier reads. */
  private lineText(tail: Uint8Array, events: SseEvent[]): void {
    let text = this.pendingText + this.lineDecoder.decode(tail);
    let bytes = this.pendingBytes + tail.length;
    this.pendingText = "";
    this.pendingBytes = 0;
    if (text.endsWith("\r")) {
      text = text.slice(0, -1);
      bytes--;
    }
    if (text === "") return this.dispatch(events);
    if (!text.startsWith("data:")) {
      if (bytes > this.maxEventBytes + PREFIX_SLACK) this.cut(events);
      return;
    }
    const from = text.charCodeAt(5) === SPACE ? 6 : 5;
    this.addData(text.slice(from), Math.max(0, bytes - from), events); // the prefix is ASCII: one byte per unit
  }

  private addData(value: string, bytes: number, events: SseEvent[]): void {
    const size = this.dataBytes + (this.data.length > 0 ? 1 : 0) + bytes;
    if (size > this.maxEventBytes) {
      this.cut(events);
      return;
    }
    this.data.push(value);
    this.dataBytes = size;
  }

  private dispatch(events: SseEvent[]): void {
    if (this.data.length > 0) events.push({ data: this.data.length === 1 ? this.data[0]! : this.data.join("\n"), bytes: this.dataBytes });
    this.data = [];
    this.dataBytes = 0;
  }

  private cut(events: SseEvent[]): SseEvent[] {
    this.overflow = true;
    this.pendingText = "";
    this.data = [];
    return events;
  }
}
