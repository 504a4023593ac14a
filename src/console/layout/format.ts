import { nanoToUsdString } from "../../catalog/money";

/** Display formats. Money stays integer nano-USD until this last step, and is shown exactly. */

/** nano-USD → "$12.50", "$0.000123456", "−$0.02": every significant digit, at least two decimals. */
export function usd(nano: number): string {
  const exact = nanoToUsdString(Math.abs(nano));
  const [whole, frac = ""] = exact.split(".");
  return `${nano < 0 ? "−" : ""}$${whole}.${frac.padEnd(2, "0")}`;
}

/** A per-token nano price as USD per 1M tokens: 75 → "$0.075". */
export function perMillion(nanoPerToken: number): string {
  return usd(nanoPerToken * 1_000_000);
}

export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/**
 * A count for a chart's axis: whole below 1,000, then short with at most three significant digits:
 * 950 → "950", 1,800 → "1.8K", 3,400,000 → "3.4M".
 */
export function compactCount(n: number): string {
  let v = n;
  let suffix = "";
  for (const next of ["K", "M", "B"]) {
    if (Math.abs(v) < 999.5) break;
    v /= 1000;
    suffix = next;
  }
  return suffix ? `${Number(v.toPrecision(3))}${suffix}` : count(Math.round(v));
}

/** A context size the way catalogs print it: 131072 → "131K", 1048576 → "1.05M". */
export function contextSize(tokens: number): string {
  if (tokens >= 1_000_000) return `${Number((tokens / 1_000_000).toFixed(2))}M`;
  if (tokens >= 1000) return `${Math.round(tokens / 1000)}K`;
  return String(tokens);
}

/** Unix ms → "2026-07-01 14:03:11 UTC". */
export function utcDateTime(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

/** Unix ms → "2026-07-01". */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function modalities(input: readonly string[], output: readonly string[]): string {
  return `${input.join(", ")} → ${output.join(", ")}`;
}
