// `npm run admin -- <command> [flags]`: operate a running service through its /admin API; prints one JSON object.
import { parseArgs } from "node:util";
import { AdminClient, AdminError } from "./admin-client.ts";
import { DEV_ADMIN_TOKEN } from "./local-service.ts";
import { USAGE, UsageError, adminRequest, type AdminRequest } from "./admin-commands.ts";

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
