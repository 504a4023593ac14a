// PaymentIntent, Charge, Refund and Dispute objects as a paid Checkout Session leaves them
// (card payments only), in the installed SDK's API version.
import type Stripe from "stripe";
import type { TestCard } from "./cards";
import { newId, secretSuffix } from "./ids";

export type Payment = {
  amount: number;
  currency: string;
  created: number;
  metadata: Record<string, string>;
  description: string | null;
  receiptEmail: string | null;
  card: TestCard;
  expMonth: number;
  expYear: number;
  email: string | null;
  name: string | null;
};

export function paymentIntent(p: Payment, ids: { paymentIntent: string; charge: string; paymentMethod: string }): Stripe.PaymentIntent {
  return {
    id: ids.paymentIntent,
    object: "payment_intent",
    allowed_payment_method_types: null,
    amount: p.amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: p.amount,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: "automatic_async",
    client_secret: `${ids.paymentIntent}_secret_${secretSuffix()}`,
    confirmation_method: "automatic",
    created: p.created,
    currency: p.currency,
    customer: null,
    customer_account: null,
    description: p.description,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: ids.charge,
    livemode: false,
    managed_payments: null,
    metadata: p.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: ids.paymentMethod,
    payment_method_configuration_details: null,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: "automatic" } },
    payment_method_types: ["card"],
    payment_record: null,
    processing: null,
    receipt_email: p.receiptEmail,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: "succeeded",
    transfer_data: null,
    transfer_group: null,
  };
}

export function charge(p: Payment, ids: { paymentIntent: string; charge: string; paymentMethod: string }): Stripe.Charge {
  return {
    id: ids.charge,
    object: "charge",
    amount: p.amount,
    amount_captured: p.amount,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: newId("txn"),
    billing_details: {
      address: { city: null, country: "US", line1: null, line2: null, postal_code: null, state: null },
      email: p.email,
      name: p.name,
      phone: null,
      tax_id: null,
    },
    calculated_statement_descriptor: "SIMULATOR",
    captured: true,
    created: p.created,
    currency: p.currency,
    customer: null,
    description: p.description,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: null,
    failure_message: null,
    fraud_details: {},
    livemode: false,
    metadata: p.metadata,
    on_behalf_of: null,
    outcome: {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: "approved_by_network",
      reason: null,
      risk_level: "normal",
      risk_score: 21,
      seller_message: "Payment complete.",
      type: "authorized",
    },
    paid: true,
    payment_intent: ids.paymentIntent,
    payment_method: ids.paymentMethod,
    payment_method_details: {
      card: {
        amount_authorized: p.amount,
        authorization_code: null,
        brand: p.card.brand,
        checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: "pass" },
        country: "US",
        electronic_commerce_indicator: null,
        exp_month: p.expMonth,
        exp_year: p.expYear,
        extended_authorization: { status: "disabled" },
        fingerprint: p.card.fingerprint,
        funding: p.card.funding,
        incremental_authorization: { status: "unavailable" },
        installments: null,
        last4: p.card.number.slice(-4),
        mandate: null,
        multicapture: { status: "unavailable" },
        network: p.card.brand,
        network_token: { used: false },
        network_transaction_id: "104557651805572",
        overcapture: { maximum_amount_capturable: p.amount, status: "unavailable" },
        regulated_status: "unregulated",
        three_d_secure: null,
        transaction_link_id: null,
        wallet: null,
      },
      type: "card",
    },
    receipt_email: p.receiptEmail,
    receipt_number: null,
    receipt_url: null,
    refunded: false,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: "succeeded",
    transfer_data: null,
    transfer_group: null,
  };
}

export function refund(
  c: Stripe.Charge,
  amount: number,
  reason: Stripe.Refund.Reason | null,
  metadata: Record<string, string>,
  created: number,
): Stripe.Refund {
  return {
    id: newId("re"),
    object: "refund",
    amount,
    balance_transaction: newId("txn"),
    charge: c.id,
    created,
    currency: c.currency,
    customer: null,
    customer_account: null,
    destination_details: { card: { reference_status: "pending", reference_type: "acquirer_reference_number", type: "refund" }, type: "card" },
    metadata,
    payment_intent: typeof c.payment_intent === "string" ? c.payment_intent : (c.payment_intent?.id ?? null),
    payment_method: c.payment_method,
    reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: "succeeded",
    transfer_reversal: null,
  };
}

const NULL_EVIDENCE_FIELDS = [
  "access_activity_log",
  "billing_address",
  "cancellation_policy",
  "cancellation_policy_disclosure",
  "cancellation_rebuttal",
  "customer_communication",
  "customer_email_address",
  "customer_name",
  "customer_purchase_ip",
  "customer_signature",
  "duplicate_charge_documentation",
  "duplicate_charge_explanation",
  "duplicate_charge_id",
  "product_description",
  "receipt",
  "refund_policy",
  "refund_policy_disclosure",
  "refund_refusal_explanation",
  "service_date",
  "service_documentation",
  "shipping_address",
  "shipping_carrier",
  "shipping_date",
  "shipping_documentation",
  "shipping_tracking_number",
  "uncategorized_file",
  "uncategorized_text",
] as const;

const EVIDENCE_DAYS = 7;

/**
 * A card network's dispute, evidence not yet submitted: a fraud chargeback (Visa 10.4; the money has
 * left the balance, the charge can no longer be refunded) or an inquiry (the issuer asks first; nothing
 * has moved, the charge can still be refunded).
 */
export function dispute(c: Stripe.Charge, amount: number, created: number, kind: "chargeback" | "inquiry" = "chargeback"): Stripe.Dispute {
  const evidence = Object.fromEntries(NULL_EVIDENCE_FIELDS.map((f) => [f, null])) as Record<(typeof NULL_EVIDENCE_FIELDS)[number], null>;
  const brand = c.payment_method_details?.card?.brand ?? "visa";
  const inquiry = kind === "inquiry";
  return {
    id: newId("dp"),
    object: "dispute",
    amount,
    balance_transactions: [],
    charge: c.id,
    created,
    currency: c.currency,
    enhanced_eligibility_types: [],
    evidence: { ...evidence, enhanced_evidence: {} },
    evidence_details: {
      due_by: created + EVIDENCE_DAYS * 86_400,
      enhanced_eligibility: {},
      has_evidence: false,
      past_due: false,
      submission_count: 0,
      submission_method: "not_submitted",
    },
    intended_submission_method: null,
    is_charge_refundable: inquiry,
    livemode: false,
    metadata: {},
    payment_intent: typeof c.payment_intent === "string" ? c.payment_intent : (c.payment_intent?.id ?? null),
    payment_method_details: {
      card: { brand, case_type: kind, network: brand, network_reason_code: inquiry ? null : "10.4" },
      type: "card",
    },
    reason: inquiry ? "general" : "fraudulent",
    status: inquiry ? "warning_needs_response" : "needs_response",
  };
}
