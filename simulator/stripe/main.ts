// CLI: `tsx simulator/stripe/main.ts [--port 8789] [--host 127.0.0.1] [--webhook-url URL] [--webhook-secret whsec_…]`
// (the secret also from STRIPE_WEBHOOK_SECRET). Serves until SIGINT/SIGTERM.
import { parseArgs } from "node:util";
import { exitOnSignals } from "../http";
import { startStripeSimulator } from "./server";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8789" },
    host: { type: "string", default: "127.0.0.1" },
    "webhook-url": { type: "string" },
    "webhook-secret": { type: "string" },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be a port number, got ${values.port}`);
  process.exit(2);
}
const webhookSecret = values["webhook-secret"] ?? process.env.STRIPE_WEBHOOK_SECRET;
if (!webhookSecret) {
  console.error("a webhook signing secret is required: --webhook-secret whsec_… or STRIPE_WEBHOOK_SECRET");
  process.exit(2);
}

const sim = await startStripeSimulator({ port, host: values.host, webhookSecret, webhookUrl: values["webhook-url"] });
console.log(`stripe simulator listening on ${sim.url}`);

exitOnSignals(() => sim.close());
