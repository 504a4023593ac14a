/**
 * One carrier attempt of a request, served or failed: what the generation record keeps in
 * `provider_responses` (JSON, in order, the served attempt last) and what endpoint health is
 * counted into (the minute rollups, src/db/endpoint-minutes.ts, as the records are flushed).
 */
export type CarrierAttempt = {
  /** Catalog model id the attempt was for (differs between attempts when `models` falls back). */
  model: string;
  /** Carrier slug, and its display name (the contract's provider_name). */
  provider: string;
  providerName: string;
  /** The carrier's HTTP status; 502 when it could not be reached or its answer was unusable, 504 on timeout. */
  status: number;
  /** Start of the attempt, Unix ms. */
  at: number;
  /** Milliseconds to the first token when served, else to the failure. */
  latencyMs: number;
  /** Completion tokens per second after the first token; null when nothing was served. */
  tokensPerSecond: number | null;
};

/** Status recorded for an attempt that got no usable HTTP answer. */
export const UNREACHABLE_STATUS = 502;
export const TIMEOUT_STATUS = 504;

/** Statuses with which a carrier says the request itself is invalid; any other 4xx but 429 is the carrier's fault. */
export const REJECTIONS = new Set([400, 413, 422]);

/**
 * Whether an attempt's status means the carrier failed (endpoint health counts it as down): a 5xx
 * (502 unreachable, 504 timeout included), or a 4xx that is the carrier's own — a revoked key (401), an
 * empty account at the carrier (402), a refusal (403), a retired model (404) — anything but a rejection
 * of the request (400, 413, 422) or a rate limit (429).
 */
export function isCarrierFault(status: number): boolean {
  return status >= 500 || (status >= 400 && status !== 429 && !REJECTIONS.has(status));
}

/** The same rule as SQL over an attempt's `status` column (the health fold). */
export const CARRIER_FAULT_SQL = `(status >= 500 OR (status >= 400 AND status NOT IN (429, ${[...REJECTIONS].join(", ")})))`;

/** A record's provider_responses column, parsed; [] when no carrier was tried. */
export function parseAttempts(json: string | null | undefined): CarrierAttempt[] {
  return json ? (JSON.parse(json) as CarrierAttempt[]) : [];
}
