import type { Env } from "../env";
import { settings } from "../settings";
import type { PaymentProvider } from "./payment-provider";
import { testCardProvider } from "./test-card-provider";

/** The payment provider this deployment takes money with: the local test-card flow with PAYMENTS_TEST_MODE=on, else none. */
export function paymentProvider(env: Env): PaymentProvider | null {
  return settings(env).PAYMENTS_TEST_MODE ? testCardProvider(env.DB) : null;
}
