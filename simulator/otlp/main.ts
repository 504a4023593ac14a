// CLI: `tsx simulator/otlp/main.ts [--port 8790] [--host H]`: the local OTLP receiver on its own.
import { parseArgs } from "node:util";
import { exitOnSignals } from "../http";
import { startOtlpReceiver } from "./server";

const { values } = parseArgs({ options: { port: { type: "string", default: "8790" }, host: { type: "string", default: "127.0.0.1" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0) {
  console.error(`--port must be a port number, got ${values.port}`);
  process.exit(2);
}
const receiver = await startOtlpReceiver({ port, host: values.host });
console.log(`OTLP receiver listening on ${receiver.url} (POST /v1/traces, GET /_sim/spans)`);
exitOnSignals(() => receiver.close());
