// Stripe's test card numbers and what each does, with the checks Stripe's card form makes first.

export type Decline = { code: string; decline_code?: string; message: string };
export type TestCard = { number: string; brand: string; funding: string; fingerprint: string; decline?: Decline };

const DECLINED = "Your card was declined.";

// A few of Stripe's documented test cards; any other number is refused as invalid.
const CARDS: TestCard[] = [
  { number: "4242424242424242", brand: "visa", funding: "credit", fingerprint: "Xt5EWLLDS7FJjR1c" },
  { number: "4000056655665556", brand: "visa", funding: "debit", fingerprint: "0XhZ2w6DKk2h5nD1" },
  { number: "5555555555554444", brand: "mastercard", funding: "credit", fingerprint: "ekWwUD6RtEKFXWf2" },
  { number: "378282246310005", brand: "amex", funding: "credit", fingerprint: "V0HS9Vh9Ug5ALcEo" },
  {
    number: "4000000000000002",
    brand: "visa",
    funding: "credit",
    fingerprint: "dp4Bu8RTEMwf3RjK",
    decline: { code: "card_declined", decline_code: "generic_decline", message: DECLINED },
  },
  {
    number: "4000000000009995",
    brand: "visa",
    funding: "credit",
    fingerprint: "hZ3bqvNsXyNJdECV",
    decline: { code: "card_declined", decline_code: "insufficient_funds", message: "Your card has insufficient funds." },
  },
  {
    number: "4000000000000069",
    brand: "visa",
    funding: "credit",
    fingerprint: "kUH9ZNcmoYcACLmb",
    decline: { code: "expired_card", message: "Your card has expired." },
  },
  {
    number: "4000000000000127",
    brand: "visa",
    funding: "credit",
    fingerprint: "RCW5Ah1hRcPv1b0X",
    decline: { code: "incorrect_cvc", message: "Your card's security code is incorrect." },
  },
];

export type CardCheck = { card: TestCard; expMonth: number; expYear: number } | { error: Decline; field: "cardNumber" | "cardExpiry" | "cardCvc" };

/** The test card for a number as typed (spaces allowed), or undefined. */
export function testCard(number: string): TestCard | undefined {
  const digits = number.replace(/[\s-]/g, "");
  return CARDS.find((c) => c.number === digits);
}

/** Checks number, "MM / YY" expiry and CVC as the card form does; `now` for "in the past". */
export function checkCard(input: { number: string; expiry: string; cvc: string }, now: Date): CardCheck {
  const card = testCard(input.number);
  if (!card) return { field: "cardNumber", error: { code: "invalid_number", message: "Your card number is invalid." } };
  const m = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(input.expiry);
  if (!m) return { field: "cardExpiry", error: { code: "incomplete_expiry", message: "Your card's expiration date is incomplete." } };
  const expMonth = Number(m[1]);
  const expYear = m[2]!.length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  if (expMonth < 1 || expMonth > 12)
    return { field: "cardExpiry", error: { code: "invalid_expiry_month", message: "Your card's expiration month is invalid." } };
  const thisYear = now.getUTCFullYear();
  if (expYear < thisYear) return { field: "cardExpiry", error: { code: "invalid_expiry_year_past", message: "Your card's expiration year is in the past." } };
  if (expYear === thisYear && expMonth < now.getUTCMonth() + 1)
    return { field: "cardExpiry", error: { code: "invalid_expiry_month_past", message: "Your card's expiration date is in the past." } };
  const cvcLength = card.brand === "amex" ? 4 : 3;
  if (!new RegExp(`^\\d{${cvcLength}}$`).test(input.cvc.trim()))
    return { field: "cardCvc", error: { code: "incomplete_cvc", message: "Your card's security code is incomplete." } };
  return { card, expMonth, expYear };
}
