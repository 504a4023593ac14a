// Portkey's open-source AI gateway on Node, for `npm run bench -- --only peers`, as its own process:
//
//   node bench/peers/portkey.js --port <port>
//
// Runs the package's own Node entry (build/start-server.js, what its `portkey-gateway` bin and
// `npm run start:node` start) unchanged, with `--port=<port> --headless` (no console UI). That entry takes
// no host: it calls @hono/node-server's serve() without a hostname, which listens on every interface, so
// this launcher makes the one listen() of the process bind to 127.0.0.1 instead, and prints
// `listening 127.0.0.1:<port>` on stderr once it does. Nothing else is changed: Portkey does its own
// per-request work (header validation, provider transforms, the local request log) as it ships.
import net from "node:net";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error("usage: node bench/peers/portkey.js --port <port>");
  process.exit(2);
}

const HOST = "127.0.0.1";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  // serve() calls listen(port, undefined, callback): put the loopback address in the host's place.
  if (typeof args[0] === "number" && (args[1] === undefined || typeof args[1] === "function")) {
    const rest = args[1] === undefined ? args.slice(2) : args.slice(1);
    args = [args[0], HOST, ...rest];
  }
  this.once("listening", () => {
    const address = this.address();
    if (typeof address === "object" && address !== null && address.address !== HOST) {
      console.error(`portkey launcher: listening on ${address.address}, not ${HOST}; stopping`);
      process.exit(1);
    }
    console.error(`listening ${HOST}:${typeof address === "object" && address !== null ? address.port : "?"}`);
  });
  return listen.apply(this, args);
};

const entry = createRequire(import.meta.url).resolve("@portkey-ai/gateway/build/start-server.js");
process.argv = [process.argv[0], entry, `--port=${port}`, "--headless"];
await import(entry);
