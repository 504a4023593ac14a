import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "../api/chat-request";

/**
 * The worst-case cost of a request, held from admission to settle. A token is at least one byte,
 * so the body's byte length bounds the prompt; the completion is bounded by the caller's max tokens,
 * else the endpoint's max completion tokens, else its context. Priced at the dearest endpoint, since
 * fallback may land there.
 */
export function holdNano(body: ChatRequest, bodyBytes: number, endpoints: PricedEndpoint[]): number {
  let hold = 0;
  for (const e of endpoints) {
    const completionCap = body.max_completion_tokens ?? body.max_tokens ?? e.max_completion_tokens ?? e.context_length;
    hold = Math.max(hold, bodyBytes * e.inputNano + Math.min(completionCap, e.context_length) * e.outputNano);
  }
  return hold;
}
