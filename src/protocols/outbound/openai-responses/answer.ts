import type { AnswerOrUnusable } from "../../../request/answer";
import { OPENAI_RESPONSES_REASONING_FORMAT } from "./request";

type Obj = Record<string, unknown>;

/**
 * Responses usage in the canonical (OpenAI chat) meaning, which is the same meaning under other names:
 * `input_tokens` include the cached ones, `output_tokens` include the reasoning ones.
 */
export function canonicalUsage(u: unknown): Obj | undefined {
  if (typeof u !== "object" || u === null) return undefined;
  const m = u as Obj;
  const prompt = count(m.input_tokens);
  const completion = count(m.output_tokens);
  const input = (m.input_tokens_details ?? {}) as Obj;
  const output = (m.output_tokens_details ?? {}) as Obj;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: Math.min(count(input.cached_tokens), prompt) },
    completion_tokens_details: { reasoning_tokens: Math.min(count(output.reasoning_tokens), completion) },
  };
}

/** The chat finish reason of a response: `incomplete` by its reason; a response that called functions finished with `tool_calls`. */
export function finishReason(status: unknown, incomplete: unknown, calledFunctions: boolean): string {
  if (status === "incomplete") {
    const reason = typeof incomplete === "object" && incomplete !== null ? (incomplete as Obj).reason : undefined;
    return reason === "content_filter" ? "content_filter" : "length";
  }
  return calledFunctions ? "tool_calls" : "stop";
}

/** A reasoning item's summary and raw reasoning text (the models that give it), and its `reasoning_details`. */
export function reasoningOf(item: Obj, firstIndex: number): { text: string; details: Obj[] } {
  const id = typeof item.id === "string" ? item.id : undefined;
  const details: Obj[] = [];
  let text = "";
  for (const s of Array.isArray(item.summary) ? (item.summary as Obj[]) : [])
    if (typeof s.text === "string") {
      text += s.text;
      details.push({ type: "reasoning.summary", summary: s.text, id, format: OPENAI_RESPONSES_REASONING_FORMAT });
    }
  for (const c of Array.isArray(item.content) ? (item.content as Obj[]) : [])
    if (c.type === "reasoning_text" && typeof c.text === "string") {
      text += c.text;
      details.push({ type: "reasoning.text", text: c.text, id, format: OPENAI_RESPONSES_REASONING_FORMAT });
    }
  if (typeof item.encrypted_content === "string" && item.encrypted_content !== "")
    details.push({ type: "reasoning.encrypted", data: item.encrypted_content, id, format: OPENAI_RESPONSES_REASONING_FORMAT });
  details.forEach((d, i) => (d.index = firstIndex + i));
  return { text, details };
}

/**
 * A Responses answer (`object: "response"`) as a chat completion: `message` items → content (a refusal
 * as `refusal`), `function_call` items → `tool_calls` (the call's `call_id` is the tool call id),
 * `reasoning` items → `reasoning` and `reasoning_details` (summaries, raw text, the sealed content);
 * a `failed` response is unusable (the next carrier is tried). With `excludeReasoning` the reasoning is
 * billed but not returned.
 */
export function responsesAnswer(json: unknown, excludeReasoning = false): AnswerOrUnusable {
  if (typeof json !== "object" || json === null || (json as Obj).object !== "response" || !Array.isArray((json as Obj).output))
    return { unusable: "the carrier's answer is not an OpenAI response" };
  const r = json as Obj & { output: Obj[] };
  if (r.status === "failed") {
    const error = (r.error ?? {}) as Obj;
    return { unusable: `the carrier's response failed: ${String(error.code ?? "error")}: ${String(error.message ?? "")}` };
  }
  let content = "";
  let refusal = "";
  let reasoning = "";
  const details: Obj[] = [];
  const toolCalls: Obj[] = [];
  for (const item of r.output) {
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content as Obj[]) {
        if (part.type === "output_text" && typeof part.text === "string") content += part.text;
        else if (part.type === "refusal" && typeof part.refusal === "string") refusal += part.refusal;
      }
    } else if (item.type === "function_call")
      toolCalls.push({
        id: item.call_id,
        type: "function",
        function: { name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : "" },
      });
    else if (item.type === "reasoning") {
      const of = reasoningOf(item, details.length);
      reasoning += of.text;
      details.push(...of.details);
    }
  }
  const message: Obj = { role: "assistant", content: content === "" && (toolCalls.length || refusal !== "") ? null : content };
  if (refusal !== "") message.refusal = refusal;
  if (details.length && !excludeReasoning) {
    message.reasoning = reasoning;
    message.reasoning_details = details;
  }
  if (toolCalls.length) message.tool_calls = toolCalls;
  const usage = canonicalUsage(r.usage);
  return {
    answer: {
      id: r.id,
      object: "chat.completion",
      created: r.created_at,
      model: r.model,
      choices: [{ index: 0, message, finish_reason: finishReason(r.status, r.incomplete_details, toolCalls.length > 0) }],
      ...(usage ? { usage } : {}),
    },
  };
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}
