// Checkout Sessions: creation (with Stripe's validation), expiry, and payment by a test card.
import type Stripe from "stripe";
import type { TestCard } from "./cards";
import { charge, paymentIntent } from "./charge-objects";
import { ApiError, invalid, noSuch } from "./errors";
import { newId } from "./ids";
import { formatMoney, knownCurrency } from "./money";
import type { Params } from "./params";
import { checkoutSession, lineItem, type NewLineItem } from "./session-object";
import { NO_REQUEST, type RequestRef, type SessionRecord, type Store } from "./store";

const MIN_EXPIRY_S = 30 * 60;
const MAX_EXPIRY_S = 24 * 60 * 60;
// A request computed "now + 30 min" a moment before it reached us is still accepted.
const EXPIRY_SLACK_S = 5;
const MAX_LINE_ITEMS = 100;
const MAX_AMOUNT = 99_999_999;
// Stripe's minimum charge for USD; other currencies' minimums are not modelled.
const MIN_USD_CENTS = 50;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function url(p: Params, key: string): string | null {
  const v = p.str(key, { max: 5000 });
  if (v === undefined) return null;
  try {
    const u = new URL(v);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("scheme");
  } catch {
    throw invalid(p.name(key), "Not a valid URL", "url_invalid");
  }
  return v;
}

function readLineItem(item: Params): NewLineItem {
  const price = item.str("price");
  if (price !== undefined) throw noSuch("price", price, item.name("price"));
  const quantity = item.int("quantity", { required: true, min: 1, max: 999_999 })!;
  const data = item.hash("price_data", { required: true })!;
  const currency = data.str("currency", { required: true })!.toLowerCase();
  if (!knownCurrency(currency)) throw invalid(data.name("currency"), `Invalid currency: ${currency}.`, "parameter_invalid_string");
  const product = data.str("product");
  if (product !== undefined) throw noSuch("product", product, data.name("product"));
  if (data.has("recurring")) {
    throw invalid(
      data.name("recurring"),
      "You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.",
    );
  }
  data.oneOf("tax_behavior", ["exclusive", "inclusive", "unspecified"] as const);
  const unitAmount = data.int("unit_amount", { required: true, min: 1, max: MAX_AMOUNT })!;
  const productData = data.hash("product_data", { required: true })!;
  const name = productData.str("name", { required: true, max: 250 })!;
  const description = productData.str("description", { max: 40_000 }) ?? null;
  const images = productData.strings("images");
  const productMetadata = productData.metadata("metadata") ?? {};
  productData.str("tax_code");
  return { name, description, images, productMetadata, currency, unitAmount, quantity };
}

/** `POST /v1/checkout/sessions`: payment mode with `price_data` line items (the form this simulator models). */
export function createSession(store: Store, p: Params): Stripe.Checkout.Session {
  const mode = p.oneOf("mode", ["payment", "setup", "subscription"] as const, { required: true });
  if (mode !== "payment") throw invalid("mode", `This simulator models only mode=payment (got ${mode}).`);
  const rawItems = p.hashes("line_items");
  if (!rawItems || rawItems.length === 0) throw invalid("line_items", "`line_items` is required in `payment` mode.", "parameter_missing");
  if (rawItems.length > MAX_LINE_ITEMS) throw invalid("line_items", `You may only specify up to ${MAX_LINE_ITEMS} line items.`);
  const items = rawItems.map(readLineItem);
  const currency = items[0]!.currency;
  const other = items.find((i) => i.currency !== currency);
  if (other) throw invalid("line_items", `All line items must have the same currency; got ${currency} and ${other.currency}.`);
  const sessionCurrency = p.str("currency")?.toLowerCase();
  if (sessionCurrency !== undefined && sessionCurrency !== currency)
    throw invalid("currency", `The currency ${sessionCurrency} does not match the line items' ${currency}.`);
  const total = items.reduce((sum, i) => sum + i.unitAmount * i.quantity, 0);
  if (currency === "usd" && total < MIN_USD_CENTS)
    throw invalid("line_items", `The Checkout Session's total amount due must add up to at least ${formatMoney(MIN_USD_CENTS, "usd")} usd`, "amount_too_small");
  if (total > MAX_AMOUNT)
    throw invalid(
      "line_items",
      `The Checkout Session's total amount due must be no more than ${formatMoney(MAX_AMOUNT, currency)} ${currency}`,
      "amount_too_large",
    );

  const now = store.now();
  const expiresAt = p.int("expires_at") ?? now + MAX_EXPIRY_S;
  if (expiresAt < now + MIN_EXPIRY_S - EXPIRY_SLACK_S)
    throw invalid("expires_at", "The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.");
  if (expiresAt > now + MAX_EXPIRY_S + EXPIRY_SLACK_S)
    throw invalid("expires_at", "The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.");

  const customerEmail = p.str("customer_email", { max: 800 }) ?? null;
  if (customerEmail !== null && !EMAIL.test(customerEmail)) throw invalid("customer_email", `Invalid email address: ${customerEmail}`, "email_invalid");
  const intentData = p.hash("payment_intent_data");
  const receiptEmail = intentData?.str("receipt_email") ?? null;
  if (receiptEmail !== null && !EMAIL.test(receiptEmail))
    throw invalid(intentData!.name("receipt_email"), `Invalid email address: ${receiptEmail}`, "email_invalid");
  const methodTypes = p.strings("payment_method_types");
  const unsupported = methodTypes.find((t) => t !== "card");
  if (unsupported) throw invalid("payment_method_types", `This simulator models only card payments (got ${unsupported}).`);
  p.oneOf("ui_mode", ["hosted_page", "hosted"] as const);
  // Accepted and without effect here: they change only what Stripe's own page shows.
  p.ignore("locale", "submit_type", "billing_address_collection", "customer_creation", "allow_promotion_codes");

  const lineItems = items.map((i) => lineItem(i, now));
  const session = checkoutSession({
    created: now,
    expiresAt,
    currency,
    items: lineItems,
    successUrl: url(p, "success_url"),
    cancelUrl: url(p, "cancel_url"),
    clientReferenceId: p.str("client_reference_id", { max: 200 }) ?? null,
    metadata: p.metadata("metadata") ?? {},
    customerEmail,
    baseUrl: store.baseUrl,
  });
  const record: SessionRecord = {
    session,
    items: lineItems,
    intent: {
      metadata: intentData?.metadata("metadata") ?? {},
      description: intentData?.str("description", { max: 1000 }) ?? null,
      receipt_email: receiptEmail,
    },
  };
  p.done();
  store.sessions.set(session.id, record);
  return session;
}

export function sessionRecord(store: Store, id: string): SessionRecord {
  const record = store.sessions.get(id);
  if (!record) throw noSuch("checkout.session", id);
  return record;
}

/** Expires a session: Stripe's expire endpoint, and what Stripe does itself once `expires_at` passes. */
export function expireSession(store: Store, id: string, request: RequestRef): Stripe.Checkout.Session {
  const { session } = sessionRecord(store, id);
  if (session.status !== "open") {
    throw invalid(undefined, `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of \`${session.status}\`.`);
  }
  session.status = "expired";
  session.url = null;
  store.emit("checkout.session.expired", session, request);
  return session;
}

/** Expires every open session whose `expires_at` has passed (Stripe does it on its own; events follow). */
export function expireDue(store: Store): void {
  const now = store.now();
  for (const { session } of store.sessions.values()) if (session.status === "open" && session.expires_at <= now) expireSession(store, session.id, NO_REQUEST);
}

export type Payer = { card: TestCard; expMonth: number; expYear: number; email: string | null; name: string | null };

/** A card declined by its issuer: 402 `card_error`, the session stays open for another try. */
function declined(card: TestCard): ApiError | null {
  if (!card.decline) return null;
  return new ApiError(402, { type: "card_error", ...card.decline });
}

/** Pays an open session: a succeeded PaymentIntent and Charge, the session complete, `checkout.session.completed`. */
export function paySession(store: Store, id: string, payer: Payer): Stripe.Checkout.Session {
  const record = sessionRecord(store, id);
  const { session } = record;
  if (session.status !== "open") throw invalid(undefined, `This Checkout Session is no longer open (status \`${session.status}\`).`);
  const refusal = declined(payer.card);
  if (refusal) throw refusal;
  const ids = { paymentIntent: newId("pi"), charge: newId("ch"), paymentMethod: newId("pm") };
  const email = payer.email ?? session.customer_email;
  const payment = {
    amount: session.amount_total ?? 0,
    currency: session.currency ?? "usd",
    created: store.now(),
    metadata: record.intent.metadata,
    description: record.intent.description,
    receiptEmail: record.intent.receipt_email,
    card: payer.card,
    expMonth: payer.expMonth,
    expYear: payer.expYear,
    email,
    name: payer.name,
  };
  store.paymentIntents.set(ids.paymentIntent, paymentIntent(payment, ids));
  store.charges.set(ids.charge, charge(payment, ids));
  session.status = "complete";
  session.payment_status = "paid";
  session.payment_intent = ids.paymentIntent;
  session.url = null;
  session.customer_details = {
    address: { city: null, country: "US", line1: null, line2: null, postal_code: null, state: null },
    business_name: null,
    email,
    individual_name: null,
    name: payer.name,
    phone: null,
    tax_exempt: "none",
    tax_ids: [],
  };
  store.emit("checkout.session.completed", session, NO_REQUEST);
  return session;
}
