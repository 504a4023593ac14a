import { describe, it, expect } from "vitest";
import { settings } from "../../src/settings.ts";
import { byokFeeNano } from "../../src/request/charge.ts";

// The BYOK settings as parsed (src/settings/byok.ts): an invalid value takes the default (and is logged), never half a keyring.
const S32 = "s".repeat(32);

describe("BYOK settings", () => {
  it.each([
    [undefined, []],
    ["", []],
    [`1:${S32}`, [{ version: 1, secret: S32 }]],
    [
      `1:${S32}, 2:${"t".repeat(40)}`,
      [
        { version: 2, secret: "t".repeat(40) },
        { version: 1, secret: S32 },
      ],
    ], // newest first
    [`1:${"s".repeat(31)}`, []], // too short a secret
    [`1:${S32},1:${"t".repeat(32)}`, []], // a version twice
    [`0:${S32}`, []],
    [S32, []], // no version
    [`x:${S32}`, []],
  ])("BYOK_ENCRYPTION_KEYS=%j", (raw, ring) => {
    expect(settings(raw === undefined ? {} : { BYOK_ENCRYPTION_KEYS: raw }).BYOK_ENCRYPTION_KEYS).toEqual(ring);
  });

  it.each([
    [undefined, 5],
    ["0", 0],
    ["2.5", 2.5],
    ["100", 100],
    ["100.001", 5],
    ["-1", 5],
    ["five", 5],
  ])("BYOK_FEE_PERCENT=%j is %d", (raw, pct) => {
    expect(settings(raw === undefined ? {} : { BYOK_FEE_PERCENT: raw }).BYOK_FEE_PERCENT).toBe(pct);
  });

  it.each([
    [undefined, 1_000_000],
    ["0", 0],
    ["25", 25],
    ["-3", 1_000_000],
    ["1.5", 1_000_000],
  ])("BYOK_FREE_REQUESTS_PER_MONTH=%j is %d", (raw, n) => {
    expect(settings(raw === undefined ? {} : { BYOK_FREE_REQUESTS_PER_MONTH: raw }).BYOK_FREE_REQUESTS_PER_MONTH).toBe(n);
  });
});

describe("the BYOK fee", () => {
  it.each([
    [0, 5_000, 0],
    [1, 5_000, 1], // 0.05 nano-USD: rounded up
    [20, 5_000, 1],
    [21, 5_000, 2],
    [123_456_789, 2_500, 3_086_420], // 2.5 % = 3,086,419.725
    [9_007_199_254_740_991, 100_000, 9_007_199_254_740_991], // 100 % of the largest safe amount: exact
    [9_007_199_254_740_991, 5_000, 450_359_962_737_050], // 450,359,962,737,049.55: exact in BigInt
    [777, 0, 0],
  ])("on %d nano-USD at %d thousandths of a percent: %d", (upstream, milli, fee) => {
    expect(byokFeeNano(upstream, milli)).toBe(fee);
  });
});
