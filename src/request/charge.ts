import type { PricedEndpoint } from "../catalog/catalog";
import { costNano } from "../catalog/money";
import type { CarrierUsage } from "./usage";

/**
 * What a served answer is charged, and what caching changed that by (the prompt priced as if uncached −
 * the bill; negative when cache writes cost more; 0 when insured); when served with the account's own
 * carrier key, `byokUpstreamNano` is what the carrier charged and `costNano` the fee on it (docs/byok.md).
 */
export type Charge = { costNano: number; insured: boolean; cacheDiscountNano: number; byokUpstreamNano?: number | null };

/** The BYOK fee on `upstreamNano`: `milli` thousandths of a percent of it, rounded up to the nano-USD (exact in BigInt). */
export function byokFeeNano(upstreamNano: number, milli: number): number {
  const scaled = BigInt(upstreamNano) * BigInt(milli);
  const fee = (scaled + 99_999n) / 100_000n;
  return Number(fee);
}

/**
 * What a served answer costs, with OpenRouter's zero-completion insurance: an answer that ended in an
 * error, or that has no completion tokens and no finish reason, costs nothing (its tokens are still
 * recorded, and the record says `insured`).
 */
export function charge(tokens: CarrierUsage, endpoint: PricedEndpoint, finishReason: string | null, failed: boolean): Charge {
  const insured = failed || (tokens.completionTokens === 0 && finishReason === null);
  const byok = endpoint.byokFeeMilli;
  if (insured) return { costNano: 0, insured, cacheDiscountNano: 0, byokUpstreamNano: byok === undefined ? null : 0 };
  const cost = costNano(tokens, endpoint);
  const cached = tokens.cachedTokens > 0 || tokens.cacheWriteTokens > 0;
  const discount = cached ? costNano({ ...tokens, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 }, endpoint) - cost : 0;
  if (byok !== undefined) return { costNano: byokFeeNano(cost, byok), insured, cacheDiscountNano: discount, byokUpstreamNano: cost };
  return { costNano: cost, insured, cacheDiscountNano: discount, byokUpstreamNano: null };
}
