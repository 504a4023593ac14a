// `npm run admin -- <command> [flags]`: operate a running service through its /admin API; prints one JSON object.
import { parseArgs } from "node:util";
import { AdminClient, AdminError } from "./admin-client.ts";
import { DEV_ADMIN_TOKEN } from "./dev-admin-token.ts";
import { USAGE, UsageError, adminRequest, usageOf, type AdminRequest } from "./admin-commands.ts";

const config = {
  allowPositionals: true,
  options: {
    url: { type: "string", default: process.env.SWITCHYARD_URL ?? "http://127.0.0.1:8787" },
    token: { type: "string" },
    email: { type: "string" },
    credits: { type: "string" },
    account: { type: "string" },
    label: { type: "string" },
    limit: { type: "string" },
    hash: { type: "string" },
    usd: { type: "string" },
    "idempotency-key": { type: "string" },
    management: { type: "boolean" },
    offset: { type: "string" },
    "page-size": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
} as const;

function fail(message: string, code = 2): never {
  console.log(JSON.stringify({ error: message }));
  if (code === 2) console.error(USAGE);
  process.exit(code);
}

function parse() {
  try {
    return parseArgs(config);
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err)); // an unknown flag, or a value starting with "-" (write --credits=-1)
  }
}
const { values, positionals } = parse();

// `--help`, `help` and `help <command>`: the usage on stdout, exit 0 (an unknown command's help: 2).
if (values.help || positionals[0] === "help") {
  const topic = positionals[0] === "help" ? positionals[1] : positionals[0];
  const text = usageOf(topic);
  if (text === null) fail(`unknown command ${topic}`);
  console.log(text);
  process.exit(0);
}

let request: AdminRequest;
try {
  request = adminRequest(positionals[0], values);
} catch (err) {
  if (err instanceof UsageError) fail(err.message);
  throw err;
}

const isLocal = /^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/.test(values.url!);
const token = values.token ?? process.env.SWITCHYARD_ADMIN_TOKEN ?? (isLocal ? DEV_ADMIN_TOKEN : fail("an admin token is required for a non-local URL"));
const admin = new AdminClient(values.url!, token);
try {
  console.log(JSON.stringify(await admin.request(request.method, request.path, request.body)));
} catch (err) {
  if (err instanceof AdminError) fail(`${err.status}: ${err.message}`, 1);
  fail(`cannot reach ${values.url}: ${err instanceof Error ? err.message : String(err)}`, 1);
}
