import { describe, it, expect } from "vitest";
import { feeRule, paymentTerms, quote } from "../../src/payments/payment-terms";
import { settings } from "../../src/settings";

// The platform fee in integer cents: max(minimum, percent of the credits rounded up to the cent).
describe("payment terms and the platform fee", () => {
  const terms = paymentTerms(settings({}));
  it.each([
    [500, 80, 580], // 27.5 cents: the $0.80 minimum
    [1000, 80, 1080],
    [1455, 81, 1536], // 80.025 → 81
    [2500, 138, 2638], // 137.5 → 138
    [100_000, 5500, 105_500],
  ])("%i cents of credits: fee %i, total %i", (credits, fee, total) => {
    expect(quote(terms, credits)).toEqual({ creditsCents: credits, feeCents: fee, totalCents: total, creditsNano: credits * 1e7, feeNano: fee * 1e7 });
  });

  it("reads its settings: bounds in whole USD, the percent with up to 3 decimals, no minimum", () => {
    const custom = paymentTerms(settings({ PAYMENT_MIN_USD: "1", PAYMENT_MAX_USD: "50", PLATFORM_FEE_PERCENT: "2.125", PLATFORM_FEE_MIN_USD: "0" }));
    expect(custom).toEqual({ minCents: 100, maxCents: 5000, feeMilliPercent: 2125, feeMinCents: 0 });
    expect(quote(custom, 1000).feeCents).toBe(22); // 21.25 → 22
    expect(quote(paymentTerms(settings({ PLATFORM_FEE_PERCENT: "0", PLATFORM_FEE_MIN_USD: "0" })), 1000).feeCents).toBe(0);
    expect(feeRule(terms)).toBe("5.5 %, at least $0.80");
    expect(feeRule(custom)).toBe("2.125 %");
    // A maximum below the minimum is read as the minimum: one allowed amount, never none.
    expect(paymentTerms(settings({ PAYMENT_MIN_USD: "20", PAYMENT_MAX_USD: "10" }))).toMatchObject({ minCents: 2000, maxCents: 2000 });
  });
});
