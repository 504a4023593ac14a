import type { PricedEndpoint } from "../catalog/catalog";
import { costNano } from "../catalog/money";
import type { CarrierUsage } from "./usage";

/**
 * What a served answer costs, with OpenRouter's zero-completion insurance: an answer that ended in an
 * error, or that has no completion tokens and no finish reason, costs nothing (its tokens are still
 * recorded, and the record says `insured`).
 */
export function charge(tokens: CarrierUsage, endpoint: PricedEndpoint, finishReason: string | null, failed: boolean): { costNano: number; insured: boolean } {
  const insured = failed || (tokens.completionTokens === 0 && finishReason === null);
  return { costNano: insured ? 0 : costNano(tokens.promptTokens, tokens.completionTokens, endpoint), insured };
}
