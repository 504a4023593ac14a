// How each carrier refuses a history whose tool calls and results do not pair up, as the real ones do: an agent
// loop through the router must send every call's result right after it, so a translation that drops, moves or
// renames one fails its tests here instead of passing. Pure functions: the reason for the 400, or null.
import { isRecord, type Json } from "./http";

const records = (list: unknown): Json[] => (Array.isArray(list) ? (list as unknown[]).filter(isRecord) : []);

/** OpenAI chat: an assistant's `tool_calls` answered by `role: "tool"` messages right after it, one per id, and no other. */
export function chatToolPairing(messages: readonly unknown[]): string | null {
  let pending = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m)) continue;
    if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string" || !pending.delete(m.tool_call_id))
        return `messages.${i}: messages with role 'tool' must be a response to a preceding message with 'tool_calls'`;
      continue;
    }
    if (pending.size) return unanswered(pending);
    if (m.role === "assistant") pending = new Set(records(m.tool_calls).map((c) => String(c.id)));
  }
  return pending.size ? unanswered(pending) : null;
}

function unanswered(ids: Set<string>): string {
  return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...ids].join(", ")}`;
}

/** Anthropic: each `tool_use` answered by a `tool_result` in the next (user) message; each `tool_result` answering one in the message before. */
export function anthropicToolPairing(messages: readonly unknown[]): string | null {
  const blocks = (m: unknown): Json[] => (isRecord(m) && Array.isArray(m.content) ? records(m.content) : []);
  for (const [i, m] of messages.entries()) {
    const uses = blocks(m)
      .filter((b) => b.type === "tool_use")
      .map((b) => String(b.id));
    const answered = new Set(
      blocks(messages[i + 1])
        .filter((b) => b.type === "tool_result")
        .map((b) => String(b.tool_use_id)),
    );
    const missing = uses.filter((id) => !answered.has(id));
    if (missing.length && i + 1 < messages.length)
      return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    const asked = new Set(
      blocks(messages[i - 1])
        .filter((b) => b.type === "tool_use")
        .map((b) => String(b.id)),
    );
    const stray = blocks(m).find((b) => b.type === "tool_result" && !asked.has(String(b.tool_use_id)));
    if (stray)
      return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(stray.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  return null;
}

/** Gemini: a turn of `functionResponse` parts comes right after the `functionCall` turn, with as many parts as it has calls. */
export function geminiToolPairing(contents: readonly unknown[]): string | null {
  const count = (c: unknown, key: string) => (isRecord(c) ? records(c.parts).filter((p) => isRecord(p[key])).length : 0);
  for (const [i, c] of contents.entries()) {
    const responses = count(c, "functionResponse");
    const calls = count(contents[i - 1], "functionCall");
    if (responses && !calls) return `contents[${i}]: Please ensure that function response turn comes immediately after a function call turn.`;
    if (calls && responses !== calls)
      return `contents[${i}]: Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.`;
  }
  return null;
}
