import type { CarrierUsage } from "./usage";
import type { Charge } from "./charge";

/** How one request ended: what is debited and recorded. */
export type Outcome = {
  provider: string | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** Of promptTokens: read from and written to the carrier's cache. */
  cachedTokens: number;
  cacheWriteTokens: number;
  /** What caching changed the cost by (prompt at the input price − billed; negative when writes cost more); 0 when insured. */
  cacheDiscountNano: number;
  costNano: number;
  finishReason: string | null;
  errorMessage: string | null;
  /** When the first token reached the caller (ms epoch), null when none did. */
  firstTokenAt: number | null;
  upstreamId: string | null;
  cancelled: boolean;
  /** Where the token counts come from: the carrier's usage, our estimate, or null when nothing was served. */
  usageSource: "carrier" | "estimate" | null;
  /** Zero-completion insurance applied: tokens were served (and are recorded) but costNano is 0. */
  insured: boolean;
  /** Served with the account's own carrier key: what the carrier charged it (costNano is the fee); null otherwise. */
  byokUpstreamNano: number | null;
};

/** What a carrier served, as the relay measured it. */
export type Served = {
  provider: string;
  status: number;
  tokens: CarrierUsage;
  /** What it costs, insurance applied (`charge`). */
  charged: Charge;
  usageSource: "carrier" | "estimate";
  finishReason: string | null;
  errorMessage?: string | null;
  firstTokenAt: number | null;
  upstreamId: string | null;
  cancelled?: boolean;
};

/** The outcome of a request a carrier served (in full, in part, or failing mid-stream). */
export function servedOutcome(s: Served): Outcome {
  return {
    provider: s.provider,
    status: s.status,
    promptTokens: s.tokens.promptTokens,
    completionTokens: s.tokens.completionTokens,
    reasoningTokens: s.tokens.reasoningTokens,
    cachedTokens: s.tokens.cachedTokens,
    cacheWriteTokens: s.tokens.cacheWriteTokens,
    cacheDiscountNano: s.charged.cacheDiscountNano,
    costNano: s.charged.costNano,
    finishReason: s.finishReason,
    errorMessage: s.errorMessage ?? null,
    firstTokenAt: s.firstTokenAt,
    upstreamId: s.upstreamId,
    cancelled: s.cancelled ?? false,
    usageSource: s.usageSource,
    insured: s.charged.insured,
    byokUpstreamNano: s.charged.byokUpstreamNano ?? null,
  };
}

/** The outcome of a request no carrier served: recorded with its status and message, nothing charged. */
export function failedOutcome(status: number, message: string, provider: string | null = null): Outcome {
  return {
    provider,
    status,
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cacheDiscountNano: 0,
    costNano: 0,
    finishReason: null,
    errorMessage: message,
    firstTokenAt: null,
    upstreamId: null,
    cancelled: false,
    usageSource: null,
    insured: false,
    byokUpstreamNano: null,
  };
}
