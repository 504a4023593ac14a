import type { TestProject } from "vitest/node";
import { startSimulator } from "../simulator/server";
import { startStripeSimulator } from "../simulator/stripe/server";
import { startOtlpReceiver } from "../simulator/otlp/server";
import { TEST_STRIPE_WEBHOOK_SECRET } from "./stripe-webhook-secret";

declare module "vitest" {
  export interface ProvidedContext {
    simUrl: string;
    stripeUrl: string;
    otlpUrl: string;
  }
}

/**
 * One carrier simulator and one Stripe simulator for the whole worker test run, on ephemeral 127.0.0.1
 * ports. The Stripe simulator posts no webhooks: tests deliver its signed events themselves. And the local
 * OTLP receiver, where observability tests point their destinations (each test reads only its own spans).
 */
export default async function setup(project: TestProject) {
  const sim = await startSimulator({ port: 0 });
  const stripe = await startStripeSimulator({ port: 0, webhookSecret: TEST_STRIPE_WEBHOOK_SECRET });
  project.provide("simUrl", sim.url);
  const otlp = await startOtlpReceiver({ port: 0 });
  project.provide("stripeUrl", stripe.url);
  project.provide("otlpUrl", otlp.url);
  return async () => {
    await Promise.all([sim.close(), stripe.close(), otlp.close()]);
  };
}
