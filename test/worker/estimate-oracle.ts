// The token estimate of token-estimate.ts, written out again plainly for tests to check the relay against.
type Json = Record<string, any>;

const utf8 = (s: string) => new TextEncoder().encode(s).byteLength;
/** A generated text field's bytes as a carrier sends it: JSON-escaped, UTF-8. */
const sent = (s: unknown) => (typeof s === "string" && s !== "" ? utf8(JSON.stringify(s)) - 2 : 0);

/** max(deltas with output, ⌈output bytes ÷ 4⌉): content, reasoning (one of its two names), refusal, tool-call names and arguments. */
export function completionEstimate(deltas: Json[]): number {
  let events = 0;
  let bytes = 0;
  for (const d of deltas) {
    let n = sent(d.content) + Math.max(sent(d.reasoning), sent(d.reasoning_content)) + sent(d.refusal);
    for (const call of d.tool_calls ?? []) n += sent(call.function?.name) + sent(call.function?.arguments);
    if (n > 0) events++;
    bytes += n;
  }
  return Math.max(events, Math.ceil(bytes / 4));
}

/** ⌈text bytes ÷ 4⌉ + 4 per message + images × allowance; text: contents, text parts, earlier tool calls, tools, tool_choice, response_format. */
export function promptEstimate(body: Json, imageTokens = 1600): number {
  let bytes = 0;
  let images = 0;
  for (const m of body.messages as Json[]) {
    if (typeof m.content === "string") bytes += utf8(m.content);
    for (const part of Array.isArray(m.content) ? m.content : []) {
      if (typeof part.text === "string") bytes += utf8(part.text);
      if (part.type === "image_url") images++;
    }
    for (const call of m.tool_calls ?? []) bytes += utf8(call.function.name) + utf8(call.function.arguments);
  }
  for (const field of ["tools", "tool_choice", "response_format"])
    if (body[field] !== undefined) bytes += typeof body[field] === "string" ? utf8(body[field]) : utf8(JSON.stringify(body[field]));
  return Math.ceil(bytes / 4) + 4 * body.messages.length + images * imageTokens;
}

/** The deltas of a relayed stream's chunks. */
export const deltas = (events: Array<Json | "[DONE]">): Json[] => events.flatMap((e) => (e === "[DONE]" || !e.choices?.[0]?.delta ? [] : [e.choices[0].delta]));
