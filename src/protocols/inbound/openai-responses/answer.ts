import type { CanonicalAnswer } from "../../../request/answer";
import type { CarrierUsage } from "../../../request/usage";
import type { AnswerFacts } from "../caller-protocol";
import type { PendingSeals } from "./reasoning-envelope";
import { echoedFields } from "./echo";

type Obj = Record<string, unknown>;

/** A response id for a generation: OpenAI's `resp_` prefix on our generation id. */
export function responseId(genId: string): string {
  return `resp_${genId.replace(/^gen-/, "")}`;
}

/** An output item's id: its kind's prefix (`msg`, `fc`, `rs`), the generation, its position. */
export function itemId(prefix: "msg" | "fc" | "rs", genId: string, index: number): string {
  return `${prefix}_${genId.replace(/^gen-/, "")}_${index}`;
}

/** Usage in the Responses meaning: `input_tokens` includes cached tokens, `output_tokens` includes reasoning. */
export function responsesUsage(t: CarrierUsage): Obj {
  const details: Obj = { cached_tokens: t.cachedTokens };
  if (t.cacheWriteTokens > 0) details.cache_write_tokens = t.cacheWriteTokens;
  return {
    input_tokens: t.promptTokens,
    input_tokens_details: details,
    output_tokens: t.completionTokens,
    output_tokens_details: { reasoning_tokens: t.reasoningTokens },
    total_tokens: t.promptTokens + t.completionTokens,
  };
}

/** The response's status from the chat finish reason: cut by the token cap or a filter is `incomplete`. */
export function statusOf(finish: string | null): { status: "completed" | "incomplete"; incomplete_details: Obj | null } {
  if (finish === "length") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (finish === "content_filter") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

/**
 * A reasoning output item. Its text is the model's raw reasoning (`raw`: it came as bare text, as open
 * models give their chain of thought) → `content` as a `reasoning_text` part, as OpenAI returns gpt-oss's;
 * or a summary (the carrier gave it in reasoning details of its own, `describesText`: Anthropic's and
 * Gemini's thinking, which their makers summarize) → `summary` as a `summary_text` part. When the details are to be sealed
 * (`include`: `seals`), `encrypted_content` holds their placeholder until the async step seals them.
 */
export function reasoningItem(id: string, text: string, details: Obj[], seals: PendingSeals | null, status = "completed", raw = false): Obj {
  const item: Obj = { type: "reasoning", id, summary: text === "" || raw ? [] : [{ type: "summary_text", text }] };
  if (raw && text !== "") item.content = [{ type: "reasoning_text", text }];
  if (seals && details.length) item.encrypted_content = seals.placeholder(details);
  item.status = status;
  return item;
}

/** Whether reasoning details carry the reasoning text themselves (the carrier's own thinking blocks): then that text is a summary, not raw reasoning. */
export function describesText(details: Obj[]): boolean {
  return details.some((d) => typeof d.text === "string" && d.text !== "");
}

export function messageItem(id: string, text: string, status = "completed"): Obj {
  return { type: "message", id, status, role: "assistant", content: text === "" && status !== "completed" ? [] : [outputText(text)] };
}

export function outputText(text: string): Obj {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status = "completed"): Obj {
  return { type: "function_call", id, call_id: callId, name, arguments: args, status };
}

/** The canonical answer's first choice as output items: reasoning (its details to be sealed in `seals`, if any), then the message, then each function call. */
export function outputItems(answer: CanonicalAnswer, genId: string, seals: PendingSeals | null): Obj[] {
  const message = ((answer.choices[0] ?? {}) as Obj).message as Obj | undefined;
  if (!message) return [];
  const items: Obj[] = [];
  const details = Array.isArray(message.reasoning_details) ? (message.reasoning_details as Obj[]) : [];
  const reasoning =
    typeof message.reasoning === "string"
      ? message.reasoning
      : typeof message.reasoning_content === "string"
        ? message.reasoning_content
        : details.map((d) => (typeof d.text === "string" ? d.text : "")).join("");
  if (reasoning !== "" || details.length)
    items.push(reasoningItem(itemId("rs", genId, items.length), reasoning, details, seals, "completed", !describesText(details)));
  if (typeof message.content === "string" && message.content !== "") items.push(messageItem(itemId("msg", genId, items.length), message.content));
  if (Array.isArray(message.tool_calls))
    for (const call of message.tool_calls as Obj[]) {
      const fn = (call.function ?? {}) as Obj;
      items.push(
        functionCallItem(
          itemId("fc", genId, items.length),
          String(call.id ?? ""),
          String(fn.name ?? ""),
          typeof fn.arguments === "string" ? fn.arguments : "{}",
        ),
      );
    }
  return items;
}

/** The `response` object around output items: what the request set, echoed, and the status and usage. */
export function responseObject(
  facts: AnswerFacts,
  fields: { status: string; incomplete_details?: Obj | null; error?: Obj | null; output: readonly Obj[]; usage: Obj | null; completedAt: number | null },
): Obj {
  const e = facts.echo;
  const text = fields.output
    .filter((i) => i.type === "message")
    .flatMap((i) => i.content as Obj[])
    .map((c) => c.text)
    .join("");
  const metadata = fields.status === "in_progress" ? null : facts.metadata();
  return {
    id: responseId(facts.genId),
    object: "response",
    created_at: facts.created,
    status: fields.status,
    background: false,
    completed_at: fields.completedAt,
    error: fields.error ?? null,
    incomplete_details: fields.incomplete_details ?? null,
    max_tool_calls: null,
    model: facts.model,
    output: fields.output,
    output_text: text,
    previous_response_id: null,
    store: false,
    top_logprobs: 0,
    truncation: "disabled",
    usage: fields.usage,
    ...echoedFields(e),
    ...(metadata ? { openrouter_metadata: metadata } : {}),
  };
}
