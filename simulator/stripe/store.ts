// The simulator's whole state, in memory: Stripe's objects by id and the events made from them.
import Stripe from "stripe";
import { newId } from "./ids";

/** What an event says about the API request that caused it; nulls when a customer or the dashboard did. */
export type RequestRef = { id: string | null; idempotency_key: string | null };
export const NO_REQUEST: RequestRef = { id: null, idempotency_key: null };

/** What `payment_intent_data` asked the PaymentIntent to carry once the session is paid. */
export type IntentData = { metadata: Record<string, string>; description: string | null; receipt_email: string | null };

export type SessionRecord = { session: Stripe.Checkout.Session; items: Stripe.LineItem[]; intent: IntentData };

/** The API version the installed SDK pins: events are rendered in it, as Stripe renders an endpoint's events. */
export const API_VERSION: string = Stripe.API_VERSION;

/** One API request as it reached the simulator (path without the query): tests count what a client asked. */
export type ApiCall = { method: string; path: string; at: number };
/** API requests remembered, newest kept. */
const API_CALLS_KEPT = 10_000;

export class Store {
  readonly sessions = new Map<string, SessionRecord>();
  readonly paymentIntents = new Map<string, Stripe.PaymentIntent>();
  readonly charges = new Map<string, Stripe.Charge>();
  readonly refunds = new Map<string, Stripe.Refund>();
  readonly disputes = new Map<string, Stripe.Dispute>();
  readonly events = new Map<string, Stripe.Event>();
  readonly apiCalls: ApiCall[] = [];

  constructor(
    /** The simulator's own URL: hosted pages live under it. */
    readonly baseUrl: string,
    private readonly publish: (event: Stripe.Event) => void,
  ) {}

  now(): number {
    return Math.floor(Date.now() / 1000);
  }

  /** Records an event with a snapshot of `object` (later changes do not alter it) and hands it to delivery. */
  emit(type: string, object: object, request: RequestRef): Stripe.Event {
    const event = {
      id: newId("evt"),
      object: "event",
      api_version: API_VERSION,
      created: this.now(),
      data: { object: structuredClone(object) },
      livemode: false,
      // The configured webhook secret is one endpoint's: one endpoint is pending for every event.
      pending_webhooks: 1,
      request,
      type,
    } as unknown as Stripe.Event;
    this.events.set(event.id, event);
    this.publish(event);
    return event;
  }

  /** Remembers an API request (the oldest forgotten past API_CALLS_KEPT). */
  recordCall(method: string, path: string): void {
    this.apiCalls.push({ method, path, at: Date.now() });
    if (this.apiCalls.length > API_CALLS_KEPT) this.apiCalls.splice(0, this.apiCalls.length - API_CALLS_KEPT);
  }

  reset(): void {
    for (const map of [this.sessions, this.paymentIntents, this.charges, this.refunds, this.disputes, this.events]) map.clear();
    this.apiCalls.length = 0;
  }
}
