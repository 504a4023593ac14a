/**
 * Money is integer nano-USD (1e-9 USD) everywhere it is stored or added.
 * Prices are authored in USD per 1M tokens; USD per 1M tokens × 1000 = nano-USD per token,
 * so a price with at most three decimals per 1M is an exact integer per token.
 */
export const NANO_PER_USD = 1_000_000_000;

/** USD per 1M tokens → integer nano-USD per token; undefined when not exact. */
export function perMillionToNanoPerToken(usdPerMillion: number): number | undefined {
  const nano = usdPerMillion * 1000;
  const rounded = Math.round(nano);
  return Math.abs(nano - rounded) < 1e-6 && Number.isSafeInteger(rounded) && rounded >= 0 ? rounded : undefined;
}

/** Whole USD amount (e.g. a credit grant or key limit) → nano-USD, rounded to the nearest nano. */
export function usdToNano(usd: number): number {
  return Math.round(usd * NANO_PER_USD);
}

/** nano-USD → USD number, for display in JSON only (never added back up). */
export function nanoToUsd(nano: number): number {
  return nano / NANO_PER_USD;
}

/** Exact decimal string of nano-USD as USD: 75 → "0.000000075", 0 → "0". */
export function nanoToUsdString(nano: number): string {
  if (nano === 0) return "0";
  const sign = nano < 0 ? "-" : "";
  const digits = Math.abs(nano).toString().padStart(10, "0");
  const whole = digits.slice(0, -9);
  const frac = digits.slice(-9).replace(/0+$/, "");
  return sign + whole + (frac ? "." + frac : "");
}

/** A request's billed tokens: the prompt includes its cache-read and cache-written tokens (OpenRouter's meaning). */
export type BilledTokens = { promptTokens: number; completionTokens: number; cachedTokens: number; cacheWriteTokens: number; cacheWrite1hTokens: number };
export type TokenPrices = {
  inputNano: number;
  outputNano: number;
  cacheReadNano: number;
  cacheWriteNano: number;
  cacheWrite1hNano: number;
  /** Prices for a prompt of more than `above` tokens (the whole request is billed at them), null when the carrier has one price. */
  longContext: (Omit<TokenPrices, "longContext"> & { above: number }) | null;
};

/**
 * Cost of one request in nano-USD: uncached prompt × input + cache reads × read price + cache writes ×
 * write price (the 1-hour part at its own) + completion × output, at the long-context prices when the
 * prompt is longer than their threshold. `cacheWriteTokens` counts every write,
 * `cacheWrite1hTokens` the 1-hour part of them. Counts a carrier reports beyond its prompt are clamped
 * to it (reads first), so nothing is billed twice or negative.
 */
export function costNano(t: BilledTokens, prices: TokenPrices): number {
  const price = prices.longContext !== null && t.promptTokens > prices.longContext.above ? prices.longContext : prices;
  const cached = Math.min(t.cachedTokens, t.promptTokens);
  const write = Math.min(t.cacheWriteTokens, t.promptTokens - cached);
  const write1h = Math.min(t.cacheWrite1hTokens, write);
  const uncached = t.promptTokens - cached - write;
  return (
    uncached * price.inputNano +
    cached * price.cacheReadNano +
    (write - write1h) * price.cacheWriteNano +
    write1h * price.cacheWrite1hNano +
    t.completionTokens * price.outputNano
  );
}
