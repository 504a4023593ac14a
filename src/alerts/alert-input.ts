import { usdToNano } from "../catalog/money";

// What a person or a program may set for budget alerts, checked alike by the console and the API.

export type Parsed<T> = { ok: T } | { error: string };

/** The most a URL may be long. */
const MAX_URL = 2048;
/** The largest balance amount: a million dollars. */
const MAX_BALANCE_USD = 1_000_000;

/** A key's thresholds: whole percents of its limit, 1–100, each once. */
export function parsePercents(values: unknown[], max: number): Parsed<number[]> {
  if (values.length > max) return { error: `At most ${max} thresholds (ALERT_THRESHOLDS_PER_RULE).` };
  const out = new Set<number>();
  for (const v of values) {
    const n = typeof v === "string" && /^\s*\d+\s*%?\s*$/.test(v) ? Number(v.replace("%", "")) : v;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 100)
      return { error: `Each threshold is a whole percent from 1 to 100 of the key's limit (not ${JSON.stringify(v)}).` };
    out.add(n);
  }
  return { ok: [...out].sort((a, b) => a - b) };
}

/** The account's thresholds: USD amounts above 0 with at most 9 decimals (nano-USD), each once. */
export function parseBalanceAmounts(values: unknown[], max: number): Parsed<number[]> {
  if (values.length > max) return { error: `At most ${max} thresholds (ALERT_THRESHOLDS_PER_RULE).` };
  const out = new Set<number>();
  for (const v of values) {
    const text = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim().replace(/^\$/, "") : "";
    if (!/^\d+(\.\d{1,9})?$/.test(text) || Number(text) <= 0 || Number(text) > MAX_BALANCE_USD)
      return { error: `Each balance threshold is a USD amount above 0 and at most ${MAX_BALANCE_USD}, with at most 9 decimals (not ${JSON.stringify(v)}).` };
    out.add(usdToNano(Number(text)));
  }
  return { ok: [...out].sort((a, b) => b - a) };
}

/** A comma- or space-separated list as typed in a form ("50, 80, 100"). */
export function splitList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * A webhook endpoint's URL: https, or http to this machine only (a receiver in development). No credentials
 * in it (they would be shown on the console), no fragment.
 */
export function parseEndpointUrl(text: unknown): Parsed<string> {
  if (typeof text !== "string" || text.length > MAX_URL) return { error: `The endpoint URL is required, at most ${MAX_URL} characters.` };
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { error: "The endpoint URL is not a URL: it looks like https://example.com/hooks/switchyard." };
  }
  const local = url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]";
  if (!(url.protocol === "https:" || (url.protocol === "http:" && local)))
    return { error: "The endpoint URL must be https (http only to localhost, for development)." };
  if (url.username || url.password) return { error: "The endpoint URL may not carry a user name or password: verify the signature instead." };
  url.hash = "";
  return { ok: url.toString() };
}
