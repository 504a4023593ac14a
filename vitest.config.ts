import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { carrierSecretBindings } from "./scripts/carrier-secrets.ts";
import { TEST_STRIPE_WEBHOOK_SECRET } from "./test/stripe-webhook-secret.ts";

/**
 * The stripe package ships source maps naming sources it does not ship, and Vite warns once per file
 * (hundreds of lines a run) about a package we do not debug: those warnings only are dropped.
 */
const quietStripeSourcemaps = {
  name: "quiet-stripe-sourcemaps",
  configResolved(config: { logger: { warnOnce(msg: string, options?: unknown): void } }) {
    const warnOnce = config.logger.warnOnce.bind(config.logger);
    config.logger.warnOnce = (msg, options) => {
      if (!/^Sourcemap for ".*node_modules\/stripe\//.test(msg)) warnOnce(msg, options);
    };
  },
};

/**
 * Three projects: `worker` runs inside workerd (the real runtime) against the carrier simulator,
 * `node` drives a service started the way `npm start` does with the official openai client, and
 * `browser` drives the web console of such a service in headless Chromium.
 */
export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          quietStripeSourcemaps,
          cloudflareTest(async ({ inject }) => ({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // A second, empty database: test/worker/migrations.test.ts applies the migrations to it step by step.
              d1Databases: ["MIGRATION_DB"],
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                CARRIER_BASE_URL_OVERRIDE: inject("simUrl"),
                CARRIER_TIMEOUT_MS: "2000",
                ADMIN_TOKEN: "test-admin-token",
                // Console tests sign up freely, as `npm start` does; test/worker/console-links.test.ts sets the other policies.
                SIGN_UP: "open",
                // /responses seals reasoning under it (src/serve/reasoning-sealer.ts); tests of rotation and of no key set their own.
                REASONING_SEAL_KEY: "test-reasoning-seal-key-not-for-deploys-0123456789",
                // Encrypts accounts' own carrier keys (docs/byok.md); test/worker/byok-*.test.ts rotate with keyrings of their own.
                BYOK_ENCRYPTION_KEYS: "1:test-byok-encryption-key-not-for-deploys-0123456789",
                // The fee from the first BYOK request, so tests see it charged; test/worker/byok-allowance.test.ts drives the monthly allowance.
                BYOK_FREE_REQUESTS_PER_MONTH: "0",
                STRIPE_API_URL: inject("stripeUrl"),
                OTLP_TEST_URL: inject("otlpUrl"),
                STRIPE_SECRET_KEY: "sk_test_worker_tests",
                STRIPE_WEBHOOK_SECRET: TEST_STRIPE_WEBHOOK_SECRET,
                // Out of reach: tests that fail carriers on purpose must not reorder other tests' carriers
                // through this isolate's health. test/worker/health-routing.test.ts sets the real thresholds.
                HEALTH_CONSECUTIVE_FAILURES: "1000000",
                // Cheapest first: these tests name the carrier each request reaches first. Balancing is
                // tested with its own vars (test/worker/request-routing.test.ts) and as a pure function.
                ROUTING_BALANCE: "off",
                HEALTH_MIN_ATTEMPTS: "1000000",
                // The Cron Trigger's archive run (tests call `scheduled`) must not move other tests' records out of D1:
                // archive tests run the archive themselves, with their own clock and retention.
                RECORDS_RETENTION_DAYS: "36500",
                // Records leave each ledger a second after they settle, as before the flush delay grew for quiet accounts:
                // tests wait for records stored. test/worker/ledger-alarm.test.ts drives the growing delay with its own timings.
                RECORDS_FLUSH_MAX_DELAY_MS: "1000",
                // Keep-alives show within a test's slow stream (test/worker/inbound-apis.test.ts); the default is 10 s.
                RELAY_PING_MS: "100",
                ...carrierSecretBindings(),
              },
            },
          })),
        ],
        test: {
          name: "worker",
          include: ["test/worker/**/*.test.ts"],
          // A bound on a test, not a wait: tests that time out a carrier (CARRIER_TIMEOUT_MS 2 s) or wait for an
          // idle slice's release (1 s) take 3–4 s on a quiet machine, so 5 s leaves no room on a busy one.
          testTimeout: 15_000,
          setupFiles: ["./test/worker/apply-migrations.ts"],
          globalSetup: ["./test/global-simulator.ts"],
        },
      },
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          setupFiles: ["./test/short-keep-alive.ts"],
          // Most of these files wait on a service they started (wrangler dev, workerd, the simulators): two at once
          // even on 2 cores (vitest's default there is 1). Measured on 2 cores: 666 s of files in 371 s, all passing.
          maxWorkers: Math.max(2, availableParallelism() - 1),
          // A project whose maxWorkers differs runs in a group of its own (vitest requires it): after the others.
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          // A bound, not a wait: starting the service (bundling, wrangler dev, migrations) takes ≈ 20 s on a quiet
          // machine and went past 120 s at a load average of 16; 300 s keeps a busy CI machine green.
          hookTimeout: 300_000,
        },
      },
      {
        // The coding agents' CLIs (Claude Code, Codex) against a service the tests start as `npm start` does: runs alone with `--project agents`.
        test: {
          name: "agents",
          include: ["test/agents/**/*.test.ts"],
          environment: "node",
          setupFiles: ["./test/short-keep-alive.ts"],
          testTimeout: 150_000,
          hookTimeout: 300_000, // as the node project's
        },
      },
      {
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          setupFiles: ["./test/short-keep-alive.ts"],
          testTimeout: 90_000,
          hookTimeout: 300_000, // as the node project's
        },
      },
    ],
  },
});
