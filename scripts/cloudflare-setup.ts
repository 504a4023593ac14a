// `npm run cloudflare:setup [-- --dry-run] [--email E] [--credits USD] [--out FILE] [--dev-vars FILE] [--url URL] | [-- --check --url URL [--key K]]`:
// provisions a deployment end to end with wrangler (docs/deploy.md). Idempotent: a second run finds what
// exists and reuses it. `--dry-run` prints every command in order and runs none (no credentials needed).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { carrierSecretName } from "../src/catalog/carrier-secret.ts";
import { AdminClient, AdminError } from "./admin-client.ts";
import { deployCheck, printCheck } from "./deploy-check.ts";

const USAGE = `Usage: npm run cloudflare:setup [-- options]
  --dry-run          print every command, in order, and run none (no Cloudflare credentials needed)
  --email E          bootstrap the first account with this email and a management key (skipped if it exists)
  --credits USD      its starting credits (default 0)
  --out FILE         the generated wrangler config (default wrangler.production.toml)
  --dev-vars FILE    where to read CARRIER_KEY_* and STRIPE_* besides the environment (default .dev.vars)
  --url URL          the deployed origin, when wrangler's output does not name it (a custom domain)
  --sign-up POLICY   who may sign up on the console: invite-only (the default), closed or open (SIGN_UP, docs/deploy.md)
  --check            provision nothing: call the deployment at --url once and say what works (its models, the
                     console and its sign-up policy; with --key K, that key; with SWITCHYARD_ADMIN_TOKEN, the admin API)
  --key K            the API key --check tries (default: $SWITCHYARD_API_KEY)
Environment: SWITCHYARD_ADMIN_TOKEN (else one is generated on the first run), CARRIER_KEY_* (each carrier's key),
STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (payments; also read from --dev-vars),
WRANGLER (the wrangler executable; default node_modules/.bin/wrangler).`;

type Result = { code: number; stdout: string; stderr: string };
/** Stripe's two secrets: payments are on when the deployment has both (docs/payments.md). */
const STRIPE_SECRETS = ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"];
const { values } = parseArgs({
  options: {
    "dry-run": { type: "boolean" },
    email: { type: "string" },
    credits: { type: "string" },
    out: { type: "string", default: "wrangler.production.toml" },
    "dev-vars": { type: "string", default: ".dev.vars" },
    url: { type: "string" },
    check: { type: "boolean" },
    "sign-up": { type: "string" },
    key: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.check) {
  if (!values.url) fail("--check needs --url https://… (the deployment's origin: workers.dev or your custom domain)");
  const lines = await deployCheck(values.url, { key: values.key ?? process.env.SWITCHYARD_API_KEY, adminToken: process.env.SWITCHYARD_ADMIN_TOKEN });
  process.exit(printCheck(values.url, lines) ? 0 : 1);
}
const signUp = values["sign-up"];
if (signUp !== undefined && !["open", "invite-only", "closed"].includes(signUp)) fail(`--sign-up must be open, invite-only or closed, not ${signUp}`);
const dry = values["dry-run"] === true;
const wranglerBin = process.env.WRANGLER ?? "node_modules/.bin/wrangler";
const base = readFileSync("wrangler.toml", "utf8");
const d1Name = field(base, "database_name");
const queues = [...new Set([...base.matchAll(/^(?:queue|dead_letter_queue) = "([^"]+)"/gm)].map((m) => m[1]!))];
const KV_TITLE = "switchyard-catalog";
const buckets = [...base.matchAll(/^bucket_name = "([^"]+)"/gm)].map((m) => m[1]!);
const toKeep: string[] = [];

function field(toml: string, name: string): string {
  const m = new RegExp(`^${name} = "([^"]+)"`, "m").exec(toml);
  if (!m) throw new Error(`wrangler.toml has no ${name}`);
  return m[1]!;
}

/** One wrangler command: printed, then run (in a dry run only printed; `dryAnswer` stands for its output). */
function wrangler(args: string[], dryAnswer: Partial<Result> = {}): Result {
  console.log(`$ wrangler ${args.join(" ")}`);
  if (dry) return { code: 0, stdout: "", stderr: "", ...dryAnswer };
  const r = spawnSync(wranglerBin, args, { encoding: "utf8", env: process.env, stdio: ["ignore", "pipe", "pipe"] });
  return { code: r.status ?? 1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

function must(r: Result, what: string): Result {
  return r.code === 0 ? r : fail(`${what} failed (exit ${r.code}):\n${r.stderr || r.stdout}`);
}

function json<T>(text: string, what: string): T {
  const start = text.search(/[[{]/);
  try {
    return JSON.parse(start >= 0 ? text.slice(start) : text) as T;
  } catch {
    return fail(`${what}: wrangler's output is not the JSON expected:\n${text}`);
  }
}

// 1. Credentials.
must(wrangler(["whoami"]), "wrangler whoami (log in with `npx wrangler login`, or set CLOUDFLARE_API_TOKEN)");

// 2. The D1 database.
const d1Id = (() => {
  const find = () =>
    json<Array<{ uuid: string; name: string }>>(must(wrangler(["d1", "list", "--json"], { stdout: "[]" }), "d1 list").stdout, "d1 list").find(
      (d) => d.name === d1Name,
    );
  let found = find();
  if (found) console.log(`  D1 ${d1Name} exists: ${found.uuid}`);
  else {
    must(wrangler(["d1", "create", d1Name]), "d1 create");
    found = dry ? { uuid: "<new-d1-id>", name: d1Name } : find();
    if (!found) return fail(`D1 ${d1Name} was created but wrangler does not list it: re-run.`);
  }
  return found.uuid;
})();

// 3. The KV namespace of the catalog and the health snapshot.
const kvId = (() => {
  const find = () =>
    json<Array<{ id: string; title: string }>>(
      must(wrangler(["kv", "namespace", "list"], { stdout: "[]" }), "kv namespace list").stdout,
      "kv namespace list",
    ).find((n) => n.title === KV_TITLE);
  let found = find();
  if (found) console.log(`  KV ${KV_TITLE} exists: ${found.id}`);
  else {
    must(wrangler(["kv", "namespace", "create", KV_TITLE]), "kv namespace create");
    found = dry ? { id: "<new-kv-id>", title: KV_TITLE } : find();
    if (!found) return fail(`KV ${KV_TITLE} was created but wrangler does not list it: re-run.`);
  }
  return found.id;
})();

// 4. The queues (the settle queue, the records queue and their dead letters), as wrangler.toml names them.
for (const q of queues) {
  if (wrangler(["queues", "info", q], { code: 1 }).code === 0) console.log(`  queue ${q} exists`);
  else must(wrangler(["queues", "create", q]), `queues create ${q}`);
}

// 4b. The R2 bucket of the records archive.
for (const b of buckets) {
  if (wrangler(["r2", "bucket", "info", b], { code: 1 }).code === 0) console.log(`  R2 bucket ${b} exists`);
  else must(wrangler(["r2", "bucket", "create", b]), `r2 bucket create ${b}`);
}

// 5. The config wrangler deploys with: wrangler.toml with this account's ids and the sign-up policy (--sign-up, else
// the one the last run wrote), generated (never hand-edited).
const out = values.out!;
const policy = signUp ?? (existsSync(out) ? /^SIGN_UP = "([a-z-]+)"$/m.exec(readFileSync(out, "utf8"))?.[1] : undefined);
const config =
  `# Generated by \`npm run cloudflare:setup\` from wrangler.toml with this account's resource ids: edit wrangler.toml, then re-run it.\n` +
  base
    .replace(/^database_id = "[^"]*".*$/m, `database_id = "${d1Id}"`)
    .replace(/^id = "[^"]*".*$/m, `id = "${kvId}"`)
    .replace(/^\[vars\]$/m, policy && !/^SIGN_UP = /m.test(base) ? `[vars]\nSIGN_UP = "${policy}"` : "[vars]");
console.log(`  console sign-up: ${policy ?? "invite-only"}${signUp ? "" : " (--sign-up open|invite-only|closed to change)"}`);
if (dry) console.log(`  would write ${out} (D1 ${d1Id}, KV ${kvId})`);
else if (existsSync(out) && readFileSync(out, "utf8") === config) console.log(`  ${out} is up to date`);
else {
  writeFileSync(out, config);
  console.log(`  wrote ${out}`);
}

// 6. The tables.
must(wrangler(["d1", "migrations", "apply", "DB", "--remote", "--config", out]), "d1 migrations apply");

// 7. Secrets, uploaded with the deployment: the admin token (kept if set), the reasoning seal key (generated once), every carrier key given.
const existing = (() => {
  const r = wrangler(["secret", "list", "--format", "json", "--config", out], { stdout: "[]" });
  return r.code === 0 ? json<Array<{ name: string }>>(r.stdout, "secret list").map((s) => s.name) : []; // no Worker yet: none
})();
const secrets: Record<string, string> = {};
let adminToken = process.env.SWITCHYARD_ADMIN_TOKEN;
if (adminToken) secrets.ADMIN_TOKEN = adminToken;
else if (!existing.includes("ADMIN_TOKEN")) {
  adminToken = dry ? "<generated>" : randomBytes(32).toString("hex");
  secrets.ADMIN_TOKEN = adminToken;
  toKeep.push(`Admin token (set as the ADMIN_TOKEN secret; export it as SWITCHYARD_ADMIN_TOKEN for npm run admin): ${adminToken}`);
} else console.log("  ADMIN_TOKEN is set: kept (set SWITCHYARD_ADMIN_TOKEN to replace it)");
// The key /responses seals reasoning with: generated once, never printed (rotation: docs/deploy.md).
if (!existing.includes("REASONING_SEAL_KEY")) {
  secrets.REASONING_SEAL_KEY = dry ? "<generated>" : randomBytes(32).toString("base64");
  console.log("  REASONING_SEAL_KEY: generated");
} else console.log("  REASONING_SEAL_KEY is set: kept");
// The keyring accounts' own carrier keys are encrypted under: version 1 generated once, never printed (rotation: docs/byok.md).
if (!existing.includes("BYOK_ENCRYPTION_KEYS")) {
  secrets.BYOK_ENCRYPTION_KEYS = dry ? "<generated>" : `1:${randomBytes(32).toString("base64")}`;
  console.log("  BYOK_ENCRYPTION_KEYS: generated");
} else console.log("  BYOK_ENCRYPTION_KEYS is set: kept");
const devVars = existsSync(values["dev-vars"]!) ? readFileSync(values["dev-vars"]!, "utf8") : "";
const catalog = JSON.parse(readFileSync("catalog.json", "utf8")) as { providers: Array<{ slug: string }> };
for (const name of [...catalog.providers.map(({ slug }) => carrierSecretName(slug)), ...STRIPE_SECRETS]) {
  const value = process.env[name] || new RegExp(`^\\s*${name}\\s*=\\s*"?([^"\\s]+)"?\\s*$`, "m").exec(devVars)?.[1];
  if (value) secrets[name] = value;
}
const carriers = Object.keys(secrets).filter((k) => k.startsWith("CARRIER_KEY_"));
console.log(`  carrier keys given: ${carriers.length ? carriers.join(", ") : "none (models are listed once their carrier has a key)"}`);
const stripeGiven = STRIPE_SECRETS.filter((k) => secrets[k] !== undefined || existing.includes(k));
console.log(
  stripeGiven.length === STRIPE_SECRETS.length
    ? `  payments: Stripe (${STRIPE_SECRETS.filter((k) => secrets[k] !== undefined).join(", ") || "secrets kept"})`
    : "  payments: off until STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are both given (docs/payments.md)",
);

// 8. Deploy, with the secrets in a file only this user can read, removed at once.
const dir = mkdtempSync(join(tmpdir(), "switchyard-setup-"));
let deployed: Result;
try {
  const secretsFile = join(dir, "secrets.json");
  writeFileSync(secretsFile, JSON.stringify(secrets), { mode: 0o600 });
  const args = ["deploy", "--config", out, ...(Object.keys(secrets).length ? ["--secrets-file", dry ? "<secrets.json>" : secretsFile] : [])];
  deployed = must(wrangler(args, { stdout: "https://switchyard.<your-subdomain>.workers.dev" }), "deploy");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const url = values.url ?? /https:\/\/[^\s]+\.workers\.dev/.exec(deployed.stdout)?.[0] ?? /https?:\/\/\S+/.exec(deployed.stdout)?.[0];

// 9. The first account and its management key.
if (values.email) {
  if (!url) console.log("  bootstrap skipped: wrangler did not name the URL; re-run with --url https://…");
  else if (!adminToken) console.log("  bootstrap skipped: the admin token is not known here; set SWITCHYARD_ADMIN_TOKEN");
  else if (dry) {
    console.log(`$ GET ${url}/admin/accounts/${values.email}   (exists? then nothing is created)`);
    console.log(`$ POST ${url}/admin/accounts {"email":"${values.email}","credits":${Number(values.credits ?? 0)}}`);
    console.log(`$ POST ${url}/admin/keys {"account":"${values.email}","management":true,"label":"owner"}`);
    console.log(`$ POST ${url}/admin/accounts/${values.email}/sign-in-link   (the owner's one-time way into the console)`);
  } else await bootstrap(url, adminToken, values.email, Number(values.credits ?? 0));
}

console.log(`\n${dry ? "Dry run: nothing was run." : `Deployed${url ? ` at ${url}` : ""}.`}`);
if (toKeep.length) console.log(`\nKeep these (shown once):\n  ${toKeep.join("\n  ")}`);

async function bootstrap(origin: string, token: string, email: string, credits: number): Promise<void> {
  const admin = new AdminClient(origin, token);
  try {
    await admin.request("GET", `/accounts/${encodeURIComponent(email)}`);
    console.log(`  account ${email} exists: kept (keys: npm run admin -- create-key; a way into the console: npm run admin -- sign-in-link)`);
    return;
  } catch (err) {
    if (!(err instanceof AdminError) || err.status !== 404) throw err;
  }
  await admin.request("POST", "/accounts", { email, credits });
  const key = await admin.request<{ key: string }>("POST", "/keys", { account: email, management: true, label: "owner" });
  const link = await admin.request<{ url: string; expires_at: string }>("POST", `/accounts/${encodeURIComponent(email)}/sign-in-link`);
  console.log(`  account ${email} created with $${credits}`);
  toKeep.push(`Management key of ${email} (manages its API keys through /api/v1/keys): ${key.key}`);
  toKeep.push(
    `Sign in to the console as ${email} (works once, until ${link.expires_at}; then choose a password; another: npm run admin -- sign-in-link --account ${email}): ${link.url}`,
  );
}
