import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "../api/chat-request";
import { countImages } from "../api/image-parts";

/**
 * The worst-case cost of a request, held from admission to settle. A token is at least one byte,
 * so the body's byte length bounds the prompt's text; an image part is a few bytes of URL but is
 * billed as hundreds of tokens, so each adds the model's per-image allowance. The completion is
 * bounded by the caller's max tokens, else the endpoint's max completion tokens, else its context.
 * Priced at the dearest endpoint, since fallback may land there.
 */
export function holdNano(body: ChatRequest, bodyBytes: number, endpoints: PricedEndpoint[]): number {
  const images = countImages(body);
  let hold = 0;
  for (const e of endpoints) {
    const completionCap = body.max_completion_tokens ?? body.max_tokens ?? e.max_completion_tokens ?? e.context_length;
    hold = Math.max(hold, (bodyBytes + images * e.imageTokens) * e.inputNano + Math.min(completionCap, e.context_length) * e.outputNano);
  }
  return hold;
}
