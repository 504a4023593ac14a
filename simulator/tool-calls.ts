// Which tool the simulated model calls, if any: what the directives ask for, checked against the request's tools.
import type { Directives } from "./directives";
import { isRecord } from "./http";
import type { Normalized, Refusal } from "./wire";

/** A call to plan: the tool's name, and its arguments (JSON text) when the directive gives them. */
export type PlannedCall = { name: string; arguments?: string };

/** The names of the request's function tools (OpenAI-shaped, whatever the protocol), in order. */
function toolNames(tools: unknown[] | undefined): string[] {
  const names: string[] = [];
  for (const t of tools ?? []) {
    const fn = isRecord(t) && isRecord(t.function) ? t.function : undefined;
    if (fn && typeof fn.name === "string" && fn.name.length > 0) names.push(fn.name);
  }
  return names;
}

/**
 * The tool call the answer is: `tool_call=<name> args=<base64url>` calls that tool with exactly those
 * arguments, refused (400, as a carrier refuses a call outside the request's tools) when the request does
 * not declare it or the arguments are not a JSON object; bare `tool_call` calls the first tool (`lookup`
 * without tools) with generated arguments. Null for a text answer: no such directive, or the conversation
 * ends with a tool's result — the loop's next turn, though the earlier user message still holds the directive.
 */
export function plannedCall(d: Directives, n: Normalized): PlannedCall | Refusal | null {
  if (n.endsWithToolResult) return null;
  if (d.toolCallName !== undefined) {
    const name = d.toolCallName;
    if (!d.toolCallArgs) return { status: 400, message: `[sim tool_call=${name}] needs args=<base64url of a JSON object>` };
    const declared = toolNames(n.tools);
    if (!declared.includes(name))
      return { status: 400, message: `the model called tool "${name}", which is not among the request's tools (${declared.join(", ") || "none"})` };
    return { name, arguments: JSON.stringify(d.toolCallArgs) };
  }
  if (d.toolCall) return { name: toolNames(n.tools)[0] ?? "lookup" };
  return null;
}
