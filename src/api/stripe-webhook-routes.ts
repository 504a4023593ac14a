import { Hono } from "hono";
import type { AppEnv } from "../keys/caller";
import { readBodyLimited } from "../http/read-limited";
import { logError, logInfo } from "../log-error";
import { paymentDeps } from "../payments/grant-payment";
import { recordStripeEvent } from "../payments/payments-store";
import { stripeAccess, verifiedEvent } from "../payments/stripe-client";
import { applyStripeEvent } from "../payments/stripe-events";

/**
 * `POST /webhooks/stripe`: Stripe's signed events — the only way (beside reconciliation, which asks
 * Stripe's API) that a payment grants credits. Unsigned or wrongly signed: 400, nothing done. Acted
 * on: 200. A failure to act: 500, so Stripe delivers it again (every step is idempotent).
 */
export const stripeWebhookRoutes = new Hono<AppEnv>();

stripeWebhookRoutes.post("/webhooks/stripe", async (c) => {
  const access = await stripeAccess(c.env);
  if (!access) return c.json({ error: { message: "Payments are not enabled on this deployment." } }, 404);
  const signature = c.req.header("stripe-signature");
  if (!signature) return c.json({ error: { message: "Missing Stripe-Signature header." } }, 400);
  const body = await readBodyLimited(c.req.raw, c.var.settings.STRIPE_WEBHOOK_MAX_BYTES);
  if (body === "too_large")
    return c.json({ error: { message: `Webhook body over ${c.var.settings.STRIPE_WEBHOOK_MAX_BYTES} bytes (STRIPE_WEBHOOK_MAX_BYTES).` } }, 413);
  let event;
  try {
    event = await verifiedEvent(access, body.text, signature);
  } catch (err) {
    logError("stripe webhook refused: signature not verified", err);
    return c.json({ error: { message: "Webhook signature verification failed." } }, 400);
  }
  try {
    const applied = await applyStripeEvent({ ...(await paymentDeps(c.env)), stripe: access.stripe }, event);
    await recordStripeEvent(c.env.DB, { id: event.id, type: event.type, paymentId: applied.paymentId, outcome: applied.outcome, now: Date.now() });
    if (applied.done !== "ignored" || applied.paymentId) logInfo("stripe event", { event: event.id, type: event.type, outcome: applied.outcome });
    return c.json({ received: true, outcome: applied.outcome });
  } catch (err) {
    logError("stripe webhook failed: Stripe will deliver it again", err, { event: event.id, type: event.type });
    return c.json({ error: { message: "The event could not be processed now; deliver it again." } }, 500);
  }
});
