// `npm run admin -- <command> [flags]`: operate a running service through its /admin API; prints one JSON object.
import { parseArgs } from "node:util";
import { AdminClient, AdminError } from "./admin-client.ts";
import { DEV_ADMIN_TOKEN } from "./local-service.ts";

const USAGE = `usage: npm run admin -- <command> [--url URL] [--token TOKEN]
  create-account --email E [--credits USD]
  create-key --account <email|id> [--label L] [--limit USD]
  disable-key --hash H
  enable-key --hash H
  grant-credits --account <email|id> --usd N
  show-account --account <email|id>
The token comes from --token, else $SWITCHYARD_ADMIN_TOKEN, else (for a local URL only) the development token.`;

const { values, positionals } = parseArgs({
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
  },
});

function fail(message: string, code = 2): never {
  console.log(JSON.stringify({ error: message }));
  if (code === 2) console.error(USAGE);
  process.exit(code);
}
const need = (name: keyof typeof values): string => values[name] ?? fail(`--${name} is required`);
const usd = (name: keyof typeof values): number | undefined => {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 ? n : fail(`--${name} must be a positive number of USD`);
};

const isLocal = /^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/.test(values.url!);
const token = values.token ?? process.env.SWITCHYARD_ADMIN_TOKEN ?? (isLocal ? DEV_ADMIN_TOKEN : fail("an admin token is required for a non-local URL"));
const admin = new AdminClient(values.url!, token);
const ref = (s: string) => encodeURIComponent(s);

const commands: Record<string, () => Promise<unknown>> = {
  "create-account": () => admin.request("POST", "/accounts", { email: need("email"), credits: usd("credits") }),
  "create-key": () => admin.request("POST", "/keys", { account: need("account"), label: values.label, limit: usd("limit") }),
  "disable-key": () => admin.request("POST", `/keys/${ref(need("hash"))}/disable`),
  "enable-key": () => admin.request("POST", `/keys/${ref(need("hash"))}/enable`),
  "grant-credits": () => admin.request("POST", `/accounts/${ref(need("account"))}/credits`, { usd: usd("usd") ?? fail("--usd is required") }),
  "show-account": () => admin.request("GET", `/accounts/${ref(need("account"))}`),
};

const command = commands[positionals[0] ?? ""];
if (!command) fail(positionals[0] ? `unknown command ${positionals[0]}` : "no command given");
try {
  console.log(JSON.stringify(await command()));
} catch (err) {
  if (err instanceof AdminError) fail(`${err.status}: ${err.message}`, 1);
  fail(`cannot reach ${values.url}: ${err instanceof Error ? err.message : String(err)}`, 1);
}
