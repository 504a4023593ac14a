import type { PricedEndpoint } from "../catalog/catalog";
import { costNano } from "../catalog/money";
import type { CarrierUsage } from "./usage";

/** What a served answer is charged, and what caching changed that by (the prompt priced as if uncached − the bill; negative when cache writes cost more; 0 when insured). */
export type Charge = { costNano: number; insured: boolean; cacheDiscountNano: number };

/**
 * What a served answer costs, with OpenRouter's zero-completion insurance: an answer that ended in an
 * error, or that has no completion tokens and no finish reason, costs nothing (its tokens are still
 * recorded, and the record says `insured`).
 */
export function charge(tokens: CarrierUsage, endpoint: PricedEndpoint, finishReason: string | null, failed: boolean): Charge {
  const insured = failed || (tokens.completionTokens === 0 && finishReason === null);
  if (insured) return { costNano: 0, insured, cacheDiscountNano: 0 };
  const cost = costNano(tokens, endpoint);
  const cached = tokens.cachedTokens > 0 || tokens.cacheWriteTokens > 0;
  return {
    costNano: cost,
    insured,
    cacheDiscountNano: cached ? costNano({ ...tokens, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 }, endpoint) - cost : 0,
  };
}
