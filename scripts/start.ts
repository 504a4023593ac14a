// `npm start`: the whole service on http://127.0.0.1:8787, offline, with a demo account and key.
// package.json runs it as `exec node --import tsx scripts/start.ts`: `exec`, so the SIGINT or SIGTERM npm forwards
// reaches this process (npm's `sh -c` would die of it or ignore it, leaving everything running), and tsx as a
// loader, not a parent process (tsx's parent SIGKILLs its child when the child is slow to confirm a signal).
import "./start-preflight.ts";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService } from "./local-service.ts";
import { AdminClient } from "./admin-client.ts";
import { ensureDemoAccount, demoSignInLink, DEMO_EMAIL, DEMO_KEY_FILE } from "./demo-account.ts";
import { configuredCarriers, realStripe } from "./dev-vars.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../simulator/otlp/server.ts";

const port = Number(process.env.PORT ?? 8787);
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--real");
if (unknown.length) {
  console.error(`Unknown option ${unknown.join(" ")}. Usage: npm start [-- --real]   (--real: real carriers, keys from .dev.vars)`);
  process.exit(2);
}
const real = args.includes("--real");
const configured = real ? configuredCarriers(".dev.vars", "catalog.json") : null;
if (configured && configured.length === 0) {
  console.error("--real: .dev.vars sets no CARRIER_KEY_*: copy .dev.vars.example to .dev.vars and fill in at least one key.");
  process.exit(2);
}
// STATE_DIR and DEMO_KEY_FILE move the local state and the demo key elsewhere (a second instance, a test).
const stripeReal = real && realStripe(".dev.vars");
// SIGINT and SIGTERM stop what has started, from the first thing started on: until a handler exists either
// signal kills this process outright, and wrangler, in a process group of its own, would keep running. One
// that comes while the service starts exits at once (wrangler's group is killed as this process exits).
let otlp: OtlpReceiver | undefined;
let service: LocalService | undefined;
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await service?.stop();
      await otlp?.close();
      process.exit(0);
    })();
  });
// The local OpenTelemetry collector an observability destination can point at (docs/observability.md); first,
// so a port in use stops npm start before anything else runs.
otlp = await startOtlpReceiver({ port: Number(process.env.OTLP_SIM_PORT ?? 8790) });
service = await startLocalService({
  port,
  simulatorPort: Number(process.env.SIM_PORT ?? 8788),
  stripePort: Number(process.env.STRIPE_SIM_PORT ?? 8789),
  persistTo: process.env.STATE_DIR,
  carriers: real ? "real" : "simulated",
  payments: stripeReal ? "real" : "simulated",
});
const keyFile = process.env.DEMO_KEY_FILE ?? DEMO_KEY_FILE;
const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
const { key, created } = await ensureDemoAccount(admin, service.url, keyFile);
const demoLink = await demoSignInLink(admin);

console.log(`
Switchyard is running.
  Web console    ${service.url}/  (sign up there and add credits)
  API base URL   ${service.url}/api/v1
  Carriers       ${configured ? `real, configured in .dev.vars: ${configured.join(", ")} (the models of the others are not listed)` : `simulated at ${service.simulator.url}`}
  Payments       ${service.stripe ? `Stripe simulator at ${service.stripe.url} (test card 4242 4242 4242 4242)` : "Stripe, keys from .dev.vars (its webhook must reach this machine: docs/payments.md)"}
  Traces         OTLP receiver at ${otlp.url}/v1/traces (JSON and protobuf; what it received: ${otlp.url}/_sim/spans)
  Demo key       ${key}  (${created ? "new, " : ""}saved in ${keyFile})
  Demo sign-in   ${demoLink.url}
                 (the console as the demo account, its key's requests in Activity; works once, until ${demoLink.expires_at.slice(11, 16)} UTC;
                 another: npm run admin -- sign-in-link --account ${DEMO_EMAIL})
  Admin          npm run admin -- <command>   (local admin token: ${DEV_ADMIN_TOKEN})

Try it:
  curl ${service.url}/api/v1/chat/completions -H "Authorization: Bearer $(cat ${keyFile})" \\
    -H "Content-Type: application/json" -d '{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"Hello"}]}'
`);
service.showRequestLog();
