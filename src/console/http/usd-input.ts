/**
 * A USD amount typed into a form ("5", "12.50", "$0.25") → integer nano-USD, exactly (no float
 * arithmetic); undefined when it is not a plain positive amount with at most `maxDecimals` decimals.
 */
export function parseUsdInput(text: string, maxDecimals = 9): number | undefined {
  const m = /^\$?\s*(\d{1,9})(?:\.(\d+))?$/.exec(text.trim().replace(/,/g, ""));
  if (!m) return undefined;
  const frac = m[2] ?? "";
  if (frac.length > maxDecimals) return undefined;
  const nano = Number(m[1]) * 1_000_000_000 + Number(frac.padEnd(9, "0") || "0");
  return Number.isSafeInteger(nano) && nano > 0 ? nano : undefined;
}
