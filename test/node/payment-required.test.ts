import { describe, it, expect } from "vitest";
import { paymentRequired } from "../../src/serve/payment-required";
import type { ApiKey } from "../../src/db/schema";

// Each 402 says which limit ran out: the balance spent (at or below zero), the balance held for requests
// in flight (money reserved until they settle: waiting also fixes it), or the key's limit.
const key = (limitNano: number | null = null) => ({ limitNano, limitReset: null }) as unknown as ApiKey;
const ORIGIN = "https://sy.test";

describe("the 402 says which limit ran out", () => {
  it.each<[string, ReturnType<typeof paymentRequired>, RegExp, Record<string, unknown>]>([
    [
      "the balance at or below zero",
      paymentRequired("balance", key(), "m/x", ORIGIN, null),
      /^Insufficient credits for m\/x: the balance is at or below zero\. Add credits at https:\/\/sy\.test\/settings\/credits$/,
      { limit_source: "credits" },
    ],
    [
      "the balance held for requests in flight",
      paymentRequired("balance", key(), "m/x", ORIGIN, null, 2_500_000_000),
      /the balance is not spent but held for requests in flight \(\$2\.5 reserved until they finish\), leaving nothing for this one\. Retry when they have finished, or add credits/,
      { limit_source: "credits", held_usd: "2.5" },
    ],
    [
      "a shortfall while part of the balance is held",
      paymentRequired("balance", key(), "m/x", ORIGIN, { kind: "completion", requestedTokens: 1000, affordableTokens: 10 }, 1_000_000),
      /can only afford 10 \(\$0\.001 of the balance is held for requests in flight until they finish\)\./,
      { limit_source: "credits", held_usd: "0.001", requested_tokens: 1000, affordable_tokens: 10 },
    ],
    [
      "the key's limit",
      paymentRequired("key_limit", key(5_000_000_000), "m/x", ORIGIN, null),
      /^This API key has reached its credit limit of \$5\./,
      { limit_source: "key_limit" },
    ],
  ])("%s", (_, err, message, metadata) => {
    expect(err.status).toBe(402);
    expect(err.message).toMatch(message);
    expect(err.metadata).toEqual(metadata);
  });

  it("held money is named only where the balance is what ran out", () => {
    expect(paymentRequired("key_limit", key(1), "m/x", ORIGIN, null, 5).message).not.toMatch(/held/);
  });
});
