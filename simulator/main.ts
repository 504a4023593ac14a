// CLI: `tsx simulator/main.ts [--port 8788] [--tps N] [--host H] [--catalog PATH] [--profiles default|off]`.
import { parseArgs } from "node:util";
import { exitOnSignals } from "./http";
import { startSimulator } from "./server";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8788" },
    host: { type: "string", default: "127.0.0.1" },
    tps: { type: "string" },
    catalog: { type: "string" },
    profiles: { type: "string", default: "default" },
  },
});

if (values.profiles !== "default" && values.profiles !== "off") {
  console.error(`--profiles must be default or off, got ${values.profiles}`);
  process.exit(2);
}

function numberFlag(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${name} must be a non-negative number, got ${raw}`);
    process.exit(2);
  }
  return n;
}

const sim = await startSimulator({
  port: numberFlag("port", values.port),
  host: values.host,
  tps: numberFlag("tps", values.tps),
  catalogPath: values.catalog,
  profiles: values.profiles,
});
console.log(`simulator listening on ${sim.url}`);

exitOnSignals(() => sim.close());
