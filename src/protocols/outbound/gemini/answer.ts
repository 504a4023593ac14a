import type { AnswerOrUnusable } from "../../../request/answer";
import { GEMINI_REASONING_FORMAT } from "./request";

type Obj = Record<string, unknown>;

const FILTERED = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"]);

/** Gemini's finish reasons as chat finish reasons (a candidate that called functions finished with `tool_calls`). */
export function finishReason(reason: unknown, calledFunctions: boolean): string | null {
  if (typeof reason !== "string" || reason === "" || reason === "FINISH_REASON_UNSPECIFIED") return null;
  if (reason === "MAX_TOKENS") return "length";
  if (FILTERED.has(reason)) return "content_filter";
  return calledFunctions ? "tool_calls" : "stop";
}

/**
 * Gemini usage in the canonical (OpenRouter) meaning: `promptTokenCount` already includes the cached
 * tokens (never added twice); the completion is the candidates' tokens plus the thoughts.
 */
export function canonicalUsage(u: unknown): Obj | undefined {
  if (typeof u !== "object" || u === null) return undefined;
  const m = u as Obj;
  const prompt = count(m.promptTokenCount);
  const thoughts = count(m.thoughtsTokenCount);
  const completion = count(m.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: Math.min(count(m.cachedContentTokenCount), prompt) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/** A tool call's id: Gemini's own when it gives one, else one made from the answer, stable for the next turn. */
export function toolCallId(call: Obj, responseId: string, candidate: number, k: number): string {
  return typeof call.id === "string" && call.id !== "" ? call.id : `call_${responseId}_${candidate}_${k}`;
}

/** One candidate's parts as a chat message (or delta) body: content, reasoning, tool calls, thought signatures. */
export function candidateMessage(parts: Obj[], responseId: string, candidate: number, firstCall: number, excludeReasoning: boolean) {
  let content = "";
  let reasoning = "";
  const details: Obj[] = [];
  const toolCalls: Obj[] = [];
  for (const p of parts) {
    let id: string | null = null;
    if (typeof p.text === "string") {
      if (p.thought === true) reasoning += p.text;
      else content += p.text;
    }
    if (typeof p.functionCall === "object" && p.functionCall !== null) {
      const call = p.functionCall as Obj;
      id = toolCallId(call, responseId, candidate, firstCall + toolCalls.length);
      toolCalls.push({ index: firstCall + toolCalls.length, id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
    }
    if (typeof p.thoughtSignature === "string")
      details.push({ type: "reasoning.encrypted", data: p.thoughtSignature, id, format: GEMINI_REASONING_FORMAT, index: details.length });
  }
  if (reasoning !== "" && !excludeReasoning) details.unshift({ type: "reasoning.text", text: reasoning, format: GEMINI_REASONING_FORMAT, index: 0 });
  details.forEach((d, i) => (d.index = i));
  return { content, reasoning: excludeReasoning ? "" : reasoning, details, toolCalls };
}

/** A `GenerateContentResponse` as a chat completion: each candidate a choice. */
export function geminiAnswer(json: unknown, excludeReasoning = false): AnswerOrUnusable {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { unusable: "the carrier's answer is not a Gemini response" };
  const r = json as Obj;
  const candidates = Array.isArray(r.candidates) ? (r.candidates as Obj[]) : null;
  const blocked = typeof r.promptFeedback === "object" && r.promptFeedback !== null && (r.promptFeedback as Obj).blockReason !== undefined;
  if (!candidates && !blocked) return { unusable: "the carrier's answer is not a Gemini response" };
  const responseId = typeof r.responseId === "string" ? r.responseId : "gemini";
  const choices = (candidates ?? [{}]).map((c, position) => {
    const index = typeof c.index === "number" ? c.index : position;
    const content = typeof c.content === "object" && c.content !== null ? (c.content as Obj) : {};
    const parts = Array.isArray(content.parts) ? (content.parts as Obj[]) : [];
    const m = candidateMessage(parts, responseId, index, 0, excludeReasoning);
    const message: Obj = { role: "assistant", content: m.content === "" && (m.toolCalls.length || !candidates) ? null : m.content };
    if (m.reasoning !== "") message.reasoning = m.reasoning;
    if (m.details.length) message.reasoning_details = m.details;
    if (m.toolCalls.length) message.tool_calls = m.toolCalls.map(({ index: _index, ...call }) => call);
    return { index, message, finish_reason: candidates ? finishReason(c.finishReason, m.toolCalls.length > 0) : "content_filter" };
  });
  const usage = canonicalUsage(r.usageMetadata);
  return { answer: { id: responseId, object: "chat.completion", model: r.modelVersion, choices, ...(usage ? { usage } : {}) } };
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}
