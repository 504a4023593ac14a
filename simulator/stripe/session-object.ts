// Checkout Session and line item objects in the installed SDK's API version: every field a strict
// client reads is present, null or empty where this simulator does not model it.
import type Stripe from "stripe";
import { newId } from "./ids";

export type NewLineItem = {
  name: string;
  description: string | null;
  images: string[];
  productMetadata: Record<string, string>;
  currency: string;
  unitAmount: number;
  quantity: number;
};

/** A line item made from `price_data` (Stripe makes an inactive one-time Price and its Product). */
export function lineItem(input: NewLineItem, created: number): Stripe.LineItem {
  const total = input.unitAmount * input.quantity;
  const price = {
    id: newId("price"),
    object: "price",
    active: false,
    billing_scheme: "per_unit",
    created,
    currency: input.currency,
    custom_unit_amount: null,
    livemode: false,
    lookup_key: null,
    metadata: {},
    nickname: null,
    product: newId("prod"),
    recurring: null,
    tax_behavior: "unspecified",
    tiers_mode: null,
    transform_quantity: null,
    type: "one_time",
    unit_amount: input.unitAmount,
    unit_amount_decimal: String(input.unitAmount),
  } as unknown as Stripe.Price; // unit_amount_decimal is a string on the wire; the SDK types it as its Decimal
  return {
    id: newId("li"),
    object: "item",
    adjustable_quantity: null,
    amount_discount: 0,
    amount_subtotal: total,
    amount_tax: 0,
    amount_total: total,
    currency: input.currency,
    description: input.name,
    metadata: {},
    price,
    quantity: input.quantity,
  };
}

export type NewSession = {
  created: number;
  expiresAt: number;
  currency: string;
  items: Stripe.LineItem[];
  successUrl: string | null;
  cancelUrl: string | null;
  clientReferenceId: string | null;
  metadata: Record<string, string>;
  customerEmail: string | null;
  baseUrl: string;
};

export function checkoutSession(input: NewSession): Stripe.Checkout.Session {
  const id = newId("cs_test");
  const total = input.items.reduce((sum, item) => sum + item.amount_total, 0);
  return {
    id,
    object: "checkout.session",
    adaptive_pricing: { enabled: false },
    after_expiration: null,
    allow_promotion_codes: null,
    allowed_payment_method_types: null,
    amount_subtotal: total,
    amount_total: total,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: input.cancelUrl,
    client_reference_id: input.clientReferenceId,
    client_secret: null,
    collected_information: null,
    consent: null,
    consent_collection: null,
    created: input.created,
    currency: input.currency,
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: null,
    customer_account: null,
    customer_creation: "if_required",
    customer_details: null,
    customer_email: input.customerEmail,
    discounts: [],
    expires_at: input.expiresAt,
    integration_identifier: null,
    invoice: null,
    invoice_creation: {
      enabled: false,
      invoice_data: { account_tax_ids: null, custom_fields: null, description: null, footer: null, issuer: null, metadata: {}, rendering_options: null },
    },
    livemode: false,
    locale: null,
    managed_payments: null,
    metadata: input.metadata,
    mode: "payment",
    origin_context: null,
    payment_intent: null,
    payment_link: null,
    payment_method_collection: "if_required",
    payment_method_configuration_details: null,
    payment_method_options: { card: { request_three_d_secure: "automatic" } },
    payment_method_types: ["card"],
    payment_status: "unpaid",
    permissions: null,
    phone_number_collection: { enabled: false },
    recovered_from: null,
    saved_payment_method_options: null,
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status: "open",
    submit_type: null,
    subscription: null,
    success_url: input.successUrl,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: "hosted_page",
    url: `${input.baseUrl}/c/pay/${id}`,
    wallet_options: null,
  };
}

/** Stripe's list object; `url` is the list's API path. */
export function listObject<T>(data: T[], hasMore: boolean, url: string): Stripe.ApiList<T> {
  return { object: "list", data, has_more: hasMore, url };
}
