import type { PricedEndpoint } from "../../../catalog/catalog";
import type { ChatRequest } from "../../../request/chat-request";
import { Untranslatable } from "../../../request/errors";
import { reasoningAsk, thinkingBudget, type Effort } from "../../../request/reasoning";

type Obj = Record<string, unknown>;

/** The `reasoning_details` format of Anthropic's signed thinking. */
export const ANTHROPIC_REASONING_FORMAT = "anthropic-claude-v1";
/** Anthropic's least thinking budget (`budget_tokens`). */
export const MIN_THINKING_BUDGET = 1024;
/** The least effort of adaptive thinking: where a caller turned reasoning off on a model that always thinks. */
export const LOWEST_EFFORT = "low";

/** OpenRouter's efforts as Anthropic's `output_config.effort` (low, medium, high, xhigh, max). */
const EFFORTS: Record<Exclude<Effort, "none">, string> = { minimal: "low", low: "low", medium: "medium", high: "high", xhigh: "xhigh", max: "max" };

/**
 * The request's `thinking` (and `output_config`) for this endpoint. A model whose thinking is always on
 * (`thinking_always_on`: Claude Opus 5.5, Fable 5.1) refuses `disabled` and a fixed budget with a 400, so
 * it gets adaptive thinking with an effort: the caller's, the lowest where the caller turned reasoning
 * off, none (the carrier's default) where the caller asked nothing; its thinking text is asked for
 * (`display: "summarized"`, else the carrier returns the blocks empty) when the caller wants reasoning
 * returned. Other models: a budget where reasoning is asked for, as before.
 */
export function thinkingFields(body: ChatRequest, endpoint: PricedEndpoint, maxTokens: number): Obj {
  const ask = reasoningAsk(body);
  if (endpoint.thinking_always_on) {
    const effort = ask === null ? null : ask.on ? (ask.effort === null ? null : EFFORTS[ask.effort]) : LOWEST_EFFORT;
    const shown = ask !== null && ask.on && !ask.exclude;
    return {
      thinking: { type: "adaptive", ...(shown ? { display: "summarized" } : {}) },
      ...(effort === null ? {} : { output_config: { effort } }),
    };
  }
  if (!ask?.on) return {};
  if (maxTokens <= MIN_THINKING_BUDGET)
    throw new Untranslatable(
      `Reasoning on Anthropic needs max_tokens above ${MIN_THINKING_BUDGET} (its least thinking budget); this request allows ${maxTokens}.`,
    );
  return { thinking: { type: "enabled", budget_tokens: Math.min(thinkingBudget(ask, maxTokens, MIN_THINKING_BUDGET), maxTokens - 1) } };
}

/** A fixed budget (`reasoning.max_tokens`) on a model that thinks adaptively only: not sent, named in the answer's metadata. */
export function budgetLeftOut(body: ChatRequest, endpoint: PricedEndpoint): string[] {
  const ask = reasoningAsk(body);
  return endpoint.thinking_always_on && ask?.on && ask.budget !== null ? ["reasoning.max_tokens"] : [];
}

/**
 * The blocks of one reasoning detail for this endpoint: signed thinking and redacted thinking byte for
 * byte when this endpoint's model can verify them; otherwise (another carrier's format, another model's
 * signature, or one of unknown origin on a model that binds its thinking) the readable thinking as plain
 * text and the rest left out, so the carrier never sees a signature it cannot verify (its 400 would end
 * the conversation: every later turn carries the same block).
 */
export function detailBlocks(d: Obj, endpoint: PricedEndpoint): Obj[] {
  const text = typeof d.text === "string" ? d.text : "";
  const signed = d.type === "reasoning.text" && typeof d.signature === "string" && d.signature !== "";
  const redacted = d.type === "reasoning.encrypted" && typeof d.data === "string";
  if (!signed && !redacted) return [];
  if (verifiable(d, endpoint)) return signed ? [{ type: "thinking", thinking: text, signature: d.signature }] : [{ type: "redacted_thinking", data: d.data }];
  return signed && text !== "" ? [{ type: "text", text }] : [];
}

function verifiable(d: Obj, endpoint: PricedEndpoint): boolean {
  if (d.format !== undefined && d.format !== null && d.format !== ANTHROPIC_REASONING_FORMAT) return false;
  if (typeof d.signed_by === "string") return d.signed_by === endpoint.upstream_model;
  return endpoint.thinking_bound_to_model !== true;
}
