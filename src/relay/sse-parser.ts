/**
 * Incremental server-sent-events parser: feed decoded text as it arrives, get back the `data`
 * payload of every completed event. Comments, `event:`/`id:` fields and junk lines are dropped.
 */
export class SseParser {
  private buffer = "";
  private data: string[] = [];

  push(text: string): string[] {
    this.buffer += text;
    const events: string[] = [];
    let start = 0;
    for (;;) {
      const nl = this.buffer.indexOf("\n", start);
      if (nl < 0) break;
      let line = this.buffer.slice(start, nl);
      start = nl + 1;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        if (this.data.length > 0) events.push(this.data.join("\n"));
        this.data = [];
      } else if (line.startsWith("data:")) {
        this.data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      }
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** Whatever complete event is pending when the stream ends without a final blank line. */
  end(): string[] {
    const rest = this.push("\n\n");
    this.buffer = "";
    return rest;
  }
}
