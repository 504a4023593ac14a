// Amounts are in the currency's smallest unit, as Stripe counts them ($12.55 = 1255, ¥500 = 500).

function formatter(currency: string): Intl.NumberFormat | null {
  try {
    return new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() });
  } catch {
    return null; // not an ISO currency Intl knows
  }
}

/** Whether Intl (and so this simulator) knows the currency. */
export function knownCurrency(currency: string): boolean {
  return /^[a-z]{3}$/.test(currency) && formatter(currency) !== null;
}

/** "$12.55" for 1255 usd; "¥500" for 500 jpy (zero-decimal currencies follow Intl's digits). */
export function formatMoney(amount: number, currency: string): string {
  const f = formatter(currency);
  if (!f) return `${amount} ${currency}`;
  const digits = f.resolvedOptions().maximumFractionDigits ?? 2;
  return f.format(amount / 10 ** digits);
}
