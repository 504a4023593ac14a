import type { Settings } from "../settings";

/** Nano-USD in one cent: Stripe counts cents, the ledger nano-USD. */
export const NANO_PER_CENT = 10_000_000;

/** What one purchase may be and what it costs beyond the credits: from the settings, whole cents. */
export type PaymentTerms = {
  minCents: number;
  maxCents: number;
  /** The platform fee: this many thousandths of a percent of the credits, rounded up to a cent… */
  feeMilliPercent: number;
  /** …and never less than this. */
  feeMinCents: number;
};

export type Quote = { creditsCents: number; feeCents: number; totalCents: number; creditsNano: number; feeNano: number };

export function paymentTerms(s: Pick<Settings, "PAYMENT_MIN_USD" | "PAYMENT_MAX_USD" | "PLATFORM_FEE_PERCENT" | "PLATFORM_FEE_MIN_USD">): PaymentTerms {
  return {
    minCents: s.PAYMENT_MIN_USD * 100,
    maxCents: Math.max(s.PAYMENT_MIN_USD, s.PAYMENT_MAX_USD) * 100,
    feeMilliPercent: Math.round(s.PLATFORM_FEE_PERCENT * 1000),
    feeMinCents: Math.round(s.PLATFORM_FEE_MIN_USD * 100),
  };
}

/** The price of `creditsCents` of credits: integer cents throughout, the fee rounded up to the cent. */
export function quote(terms: PaymentTerms, creditsCents: number): Quote {
  const percentFee = Math.ceil((creditsCents * terms.feeMilliPercent) / 100_000);
  const feeCents = Math.max(terms.feeMinCents, percentFee);
  return { creditsCents, feeCents, totalCents: creditsCents + feeCents, creditsNano: creditsCents * NANO_PER_CENT, feeNano: feeCents * NANO_PER_CENT };
}

/** The fee rule in words, for the credits page: "5.5 %, at least $0.80". */
export function feeRule(terms: PaymentTerms): string {
  const percent = `${terms.feeMilliPercent / 1000} %`;
  if (terms.feeMinCents === 0) return percent;
  return `${percent}, at least $${(terms.feeMinCents / 100).toFixed(2)}`;
}
