import { eq } from "drizzle-orm";
import { db } from "../db/client";
import { testCardCharges } from "../db/schema";
import { randomId } from "../keys/api-key";
import type { ChargeRecord, PaymentProvider } from "./payment-provider";

/** The test cards, as payment processors' sandboxes number them. No other number is accepted. */
export const TEST_CARD_APPROVED = "4242424242424242";
export const TEST_CARD_DECLINED = "4000000000000002";

const digits = (s: string) => s.replace(/[\s-]/g, "");

/** MM/YY (or MM/YYYY) not before this month, UTC. */
function expiryValid(text: string, now = new Date()): boolean {
  const m = /^(\d{2})\s*\/\s*(\d{2}|\d{4})$/.exec(text.trim());
  if (!m) return false;
  const month = Number(m[1]);
  const year = m[2]!.length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  if (month < 1 || month > 12) return false;
  return year > now.getUTCFullYear() || (year === now.getUTCFullYear() && month >= now.getUTCMonth() + 1);
}

/** Why the card fields are refused (the message is shown), or null for the approved test card. */
function refusal(fields: Readonly<Record<string, string>>): string | null {
  const number = digits(fields.card_number ?? "");
  if (!/^\d{12,19}$/.test(number)) return "Enter the card number (test mode: 4242 4242 4242 4242).";
  if (!expiryValid(fields.card_expiry ?? "")) return "Enter an expiry date in the future, as MM/YY.";
  if (!/^\d{3,4}$/.test((fields.card_cvc ?? "").trim())) return "Enter the 3 or 4 digit CVC.";
  if (number === TEST_CARD_DECLINED) return "The card was declined. Nothing was charged.";
  if (number !== TEST_CARD_APPROVED) return "Test mode accepts only the test card 4242 4242 4242 4242. Nothing was charged.";
  return null;
}

async function findCharge(d1: D1Database, paymentId: string): Promise<ChargeRecord | null> {
  const row = await db(d1).select().from(testCardCharges).where(eq(testCardCharges.paymentId, paymentId)).get();
  return row ? { paymentId: row.paymentId, accountId: row.accountId, amountNano: row.amountNano, reference: row.reference } : null;
}

/**
 * The local test-card flow: no processor, no network, no real money. The approved test card "charges"
 * the amount — recorded in `test_card_charges` under the payment id, as a real processor records a
 * charge under its idempotency key — the declined one is refused, anything else is refused with a
 * pointer to the test cards. Card fields are checked and then forgotten: never stored, never logged.
 */
export function testCardProvider(d1: D1Database): PaymentProvider {
  return {
    id: "test-card",
    name: "Test card (local test mode)",
    testMode: true,
    instructions:
      "No real money is charged and no real card is accepted. Pay with the test card 4242 4242 4242 4242, any future expiry date and any 3-digit CVC. The card 4000 0000 0000 0002 is always declined.",
    fields: [
      { name: "card_number", label: "Card number", autocomplete: "off", inputmode: "numeric", maxlength: 23 },
      { name: "card_expiry", label: "Expiry (MM/YY)", autocomplete: "off", inputmode: "numeric", maxlength: 7 },
      { name: "card_cvc", label: "CVC", autocomplete: "off", inputmode: "numeric", maxlength: 4 },
    ],
    minNano: 1_000_000_000, // $1
    maxNano: 1_000 * 1_000_000_000, // $1,000
    async charge(payment, fields) {
      let charged = await findCharge(d1, payment.id);
      if (!charged) {
        const problem = refusal(fields);
        if (problem) return { ok: false, message: problem };
        await db(d1)
          .insert(testCardCharges)
          .values({
            paymentId: payment.id,
            accountId: payment.accountId,
            amountNano: payment.amountNano,
            reference: randomId("test_", 12),
            createdAt: Date.now(),
          })
          .onConflictDoNothing();
        charged = await findCharge(d1, payment.id); // the first of concurrent charges wins
      }
      if (!charged || charged.accountId !== payment.accountId || charged.amountNano !== payment.amountNano)
        throw new Error("test-card: payment id reused for another account or amount");
      return { ok: true, reference: charged.reference };
    },
    findCharge: (paymentId) => findCharge(d1, paymentId),
  };
}
