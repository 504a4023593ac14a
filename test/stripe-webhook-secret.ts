/**
 * The signing secret the worker tests' Stripe simulator (test/global-simulator.ts) and Worker (vitest.config.ts)
 * share. A file of its own, importing nothing: what vitest.config.ts imports is bundled with the config, and
 * the simulator's modules there made Vite warn about each of them.
 */
export const TEST_STRIPE_WEBHOOK_SECRET = "whsec_worker_tests";
