import type Stripe from "stripe";
import { isolate } from "../isolate";
import { settings, type Settings, type SettingsSource } from "../settings";

/** Stripe as this deployment reaches it: the SDK client and the webhook signing secret. */
export type StripeAccess = { stripe: Stripe; webhookSecret: string; subtleCrypto: ReturnType<typeof Stripe.createSubtleCryptoProvider> };

const clients = isolate.slot("stripe clients", () => new WeakMap<object, Promise<StripeAccess>>());

/** Both of Stripe's secrets set = payments on; either missing = off (the credits page says so, the webhook answers 404). */
export function paymentsEnabled(s: Pick<Settings, "STRIPE_SECRET_KEY" | "STRIPE_WEBHOOK_SECRET">): boolean {
  return s.STRIPE_SECRET_KEY !== undefined && s.STRIPE_WEBHOOK_SECRET !== undefined;
}

/** The origin of Stripe's hosted checkout pages (the simulator's, locally): the pay form's redirect goes there. */
export function checkoutOrigin(s: Pick<Settings, "STRIPE_API_URL">): string {
  const api = s.STRIPE_API_URL;
  return api ? new URL(api).origin : "https://checkout.stripe.com";
}

/**
 * The official SDK on Workers — its fetch HTTP client — one per env object (once per isolate), or null
 * when payments are off. Loaded on first use: the SDK is most of a megabyte that no API request needs,
 * so an isolate that never takes a payment never evaluates it. `STRIPE_API_URL` (local runs only)
 * points it at the Stripe simulator by host and port.
 */
export async function stripeAccess(env: SettingsSource): Promise<StripeAccess | null> {
  if (!paymentsEnabled(settings(env))) return null;
  const known = clients.get();
  let access = known.get(env);
  if (!access) {
    access = connect(env);
    known.set(env, access);
    access.catch(() => known.delete(env));
  }
  return access;
}

async function connect(env: SettingsSource): Promise<StripeAccess> {
  const { default: Sdk } = await import("stripe");
  const s = settings(env);
  const api = s.STRIPE_API_URL ? new URL(s.STRIPE_API_URL) : null;
  const stripe = new Sdk(s.STRIPE_SECRET_KEY!, {
    httpClient: Sdk.createFetchHttpClient(),
    maxNetworkRetries: 2, // the SDK retries with the same idempotency key: never two sessions for one form
    timeout: 20_000,
    ...(api ? { host: api.hostname, port: api.port || (api.protocol === "https:" ? 443 : 80), protocol: api.protocol === "https:" ? "https" : "http" } : {}),
  });
  return { stripe, webhookSecret: s.STRIPE_WEBHOOK_SECRET!, subtleCrypto: Sdk.createSubtleCryptoProvider() };
}

/** Verifies a webhook's signature (HMAC-SHA256 with Web Crypto, Stripe's 5 min tolerance) and parses it; throws on a bad one. */
export function verifiedEvent(access: StripeAccess, payload: string, signature: string): Promise<Stripe.Event> {
  return access.stripe.webhooks.constructEventAsync(payload, signature, access.webhookSecret, undefined, access.subtleCrypto);
}
