import type { ChatRequest } from "./chat-request";

/** Reasoning effort levels, least to most. */
export type Effort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/**
 * The share of the completion cap an effort gives to thinking where a carrier takes a token budget
 * (Anthropic `budget_tokens`, Gemini `thinkingBudget`): OpenRouter's rule (high 80 %, medium 50 %, low 20 %).
 */
export const EFFORT_BUDGET_SHARE: Record<Exclude<Effort, "none">, number> = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8, xhigh: 0.9, max: 0.95 };

/** What the caller asked of reasoning, read once from `reasoning` and `reasoning_effort`, for every carrier protocol. */
export type ReasoningAsk =
  | { on: false }
  | {
      on: true;
      /** An explicit budget (`reasoning.max_tokens`), else null. */
      budget: number | null;
      /** The effort asked (`reasoning.effort`, else `reasoning_effort`), else null. */
      effort: Exclude<Effort, "none"> | null;
      /** `reasoning.exclude`: think, but return no reasoning text. */
      exclude: boolean;
    }
  | null; // nothing asked: the carrier's default

/**
 * The request's reasoning ask: `reasoning.enabled: false` or effort `none` turn it off; an effort, a
 * budget, `enabled: true` or `exclude` turn it on; nothing asked leaves the carrier's default.
 */
export function reasoningAsk(body: ChatRequest): ReasoningAsk {
  const r = body.reasoning ?? undefined;
  const effort = r?.effort ?? body.reasoning_effort ?? null;
  if (r?.enabled === false || effort === "none") return { on: false };
  const budget = typeof r?.max_tokens === "number" && r.max_tokens > 0 ? r.max_tokens : null;
  if (effort === null && budget === null && r?.enabled !== true && r?.exclude === undefined) return null;
  return { on: true, budget, effort, exclude: r?.exclude === true };
}

/**
 * A thinking budget in tokens for a carrier that takes one: the explicit budget, else the effort's share
 * of `cap` (medium when only enabled), never below `min`.
 */
export function thinkingBudget(ask: Extract<ReasoningAsk, { on: true }>, cap: number, min: number): number {
  const budget = ask.budget ?? Math.floor(cap * EFFORT_BUDGET_SHARE[ask.effort ?? "medium"]);
  return Math.max(min, budget);
}

/** `reasoning.exclude` with reasoning on: the carrier thinks (and bills it) but the caller gets no reasoning. */
export function excludesReasoning(body: ChatRequest): boolean {
  const ask = reasoningAsk(body);
  return ask !== null && ask.on && ask.exclude;
}
