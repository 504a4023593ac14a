import type { TestProject } from "vitest/node";
import { startSimulator } from "../simulator/server";
import { startStripeSimulator } from "../simulator/stripe/server";

declare module "vitest" {
  export interface ProvidedContext {
    simUrl: string;
    stripeUrl: string;
  }
}

/** The signing secret the worker tests' Stripe simulator and Worker share (vitest.config.ts). */
export const TEST_STRIPE_WEBHOOK_SECRET = "whsec_worker_tests";

/**
 * One carrier simulator and one Stripe simulator for the whole worker test run, on ephemeral 127.0.0.1
 * ports. The Stripe simulator posts no webhooks: tests deliver its signed events themselves.
 */
export default async function setup(project: TestProject) {
  const sim = await startSimulator({ port: 0 });
  const stripe = await startStripeSimulator({ port: 0, webhookSecret: TEST_STRIPE_WEBHOOK_SECRET });
  project.provide("simUrl", sim.url);
  project.provide("stripeUrl", stripe.url);
  return async () => {
    await Promise.all([sim.close(), stripe.close()]);
  };
}
