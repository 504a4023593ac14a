import { validateResponse } from "./contract.ts";

/** What a checked response was, and every way it departs from the contract (empty = conforms). */
export type Checked = {
  status: number;
  contentType: string | null;
  /** The JSON body (null for a stream). */
  json: any;
  /** A stream's `data:` payloads in order, parsed; `[DONE]` stays a string. */
  events: Array<any>;
  problems: string[];
};

/**
 * Reads a whole response and validates it: a JSON body as one document, an event stream chunk by
 * chunk (every `data:` payload but the `[DONE]` terminator, which the contract does not type).
 */
export async function checkResponse(res: Response, path: string, method: string): Promise<Checked> {
  const contentType = res.headers.get("content-type");
  const text = await res.text();
  const base = { status: res.status, contentType };
  if ((contentType ?? "").startsWith("text/event-stream")) {
    const problems: string[] = [];
    const events = sseData(text).map((d, i) => {
      if (d === "[DONE]") return d;
      try {
        const data: unknown = JSON.parse(d);
        problems.push(...validateResponse(path, method, res.status, contentType, { data }).map((p) => `chunk ${i}: ${p}`));
        return data;
      } catch {
        problems.push(`chunk ${i} is not JSON: ${d.slice(0, 200)}`);
        return d;
      }
    });
    if (events.at(-1) !== "[DONE]") problems.push("the stream does not end with data: [DONE]");
    return { ...base, json: null, events, problems };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ...base, json: text, events: [], problems: [`body is not JSON: ${text.slice(0, 200)}`] };
  }
  return { ...base, json, events: [], problems: validateResponse(path, method, res.status, contentType, json) };
}

/** The `data:` payloads of an SSE body (multi-line data joined with "\n", as the SSE standard says). */
export function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n"),
    )
    .filter((data) => data.length > 0);
}
