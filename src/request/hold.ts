import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "./chat-request";
import { billedChoices, completionCap, countParts, reasoningBudget } from "./billed-fields";
import { partTokensOf } from "../catalog/modalities";

/**
 * The worst-case cost of a request, held from admission to settle: the most any of its endpoints may
 * bill, priced at the dearest (fallback may land there).
 * - prompt: a token is at least one byte, so the body's byte length bounds the text; each media part
 *   (image, file, audio, video) is a few bytes of URL but billed as many tokens: the model's allowance;
 * - completion, per choice: the larger of `max_completion_tokens` and `max_tokens` (a carrier may read
 *   either), else the endpoint's max completion tokens, else its context; where the endpoint bills
 *   reasoning beyond that cap (`reasoning_beyond_cap`), plus the reasoning budget (without one, the
 *   context); never more than the context;
 * - choices: `n`, or `best_of` when larger (every candidate is billed);
 * - a prompt token at the dearest way it may be billed: input, or a cache write (which costs more), at
 *   the long-context prices too where the endpoint has them.
 */
export function holdNano(body: ChatRequest, bodyBytes: number, endpoints: PricedEndpoint[]): number {
  const parts = countParts(body);
  const cap = completionCap(body);
  const budget = reasoningBudget(body);
  const choices = billedChoices(body);
  let hold = 0;
  for (const e of endpoints) {
    let completion = cap ?? e.max_completion_tokens ?? e.context_length;
    if (e.reasoning_beyond_cap) completion = budget === null ? e.context_length : completion + budget;
    const prompt = bodyBytes + partTokensOf(parts, e.partTokens);
    // Long-context prices apply once the prompt may pass their threshold.
    const price = e.longContext !== null && prompt > e.longContext.above ? e.longContext : e;
    hold = Math.max(
      hold,
      prompt * Math.max(price.inputNano, price.cacheWriteNano, price.cacheWrite1hNano) + choices * Math.min(completion, e.context_length) * price.outputNano,
    );
  }
  return hold;
}
