/**
 * How "add credits" takes money. The console knows only this interface; a provider describes the
 * fields it needs, charges an amount at most once per payment id, and says what it charged under an
 * id. The only implementation in this repository is the local test-card flow, switched on by
 * `PAYMENTS_TEST_MODE=on` (as `npm start` does). With no provider, the credits page says that adding
 * credits is not available on this deployment.
 */
export interface PaymentProvider {
  /** Stored with each payment. */
  readonly id: string;
  /** Shown on the credits page. */
  readonly name: string;
  /** True when no real money moves; the page says so plainly. */
  readonly testMode: boolean;
  /** What the page tells the user before they pay. */
  readonly instructions: string;
  /** The form fields the provider needs besides the amount. */
  readonly fields: readonly PaymentField[];
  /** Smallest and largest amount one payment may add, nano-USD. */
  readonly minNano: number;
  readonly maxNano: number;
  /**
   * Charges the payment at most once per payment id, the idempotency key real processors take: a
   * repeat (a resubmitted form, a retry after a lost reply) returns the first charge's result and
   * charges nothing more. Throws when the id was used for another account or amount.
   */
  charge(payment: PaymentIntent, fields: Readonly<Record<string, string>>): Promise<ChargeResult>;
  /** What was charged under this payment id, or null when nothing was: resolves a lost reply or a crash. */
  findCharge(paymentId: string): Promise<ChargeRecord | null>;
}

export type PaymentIntent = { id: string; accountId: string; amountNano: number };

export type PaymentField = {
  name: string;
  label: string;
  autocomplete: string;
  inputmode: "numeric" | "text";
  hint?: string;
  maxlength: number;
};

/** Not ok: the payment was refused (nothing charged); the message is safe to show. */
export type ChargeResult = { ok: true; reference: string } | { ok: false; message: string };

export type ChargeRecord = { paymentId: string; accountId: string; amountNano: number; reference: string };
