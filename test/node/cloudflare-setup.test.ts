import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DEV_ADMIN_TOKEN } from "../../scripts/local-service.ts";
import { newAccount, startServiceFixture, type ServiceFixture } from "./service-fixture";
import { signInWithLink } from "./sign-in-link";

// `npm run cloudflare:setup` against a recording stand-in for wrangler (Cloudflare's API is not reachable
// here): the plan in order, the resources made once and reused on a re-run, the generated config, the
// secrets uploaded with the deployment, and the first account bootstrapped through the deployed admin API
// (a local service stands in for the deployment).
let f: ServiceFixture;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "switchyard-setup-test-")); // first: afterAll removes it also when the service did not start
  f = await startServiceFixture("setup");
});
afterAll(async () => {
  await f?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Call = { args: string[]; secrets?: string[] };
function setup(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; calls: Call[] }> {
  const log = join(dir, `log-${Math.random().toString(36).slice(2)}.jsonl`);
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "scripts/cloudflare-setup.ts", "--out", join(dir, "wrangler.production.toml"), "--dev-vars", join(dir, "none"), ...args],
      {
        env: {
          PATH: process.env.PATH ?? "",
          WRANGLER: resolve("test/node/fixtures/fake-wrangler.mjs"),
          FAKE_WRANGLER_STATE: join(dir, "cloudflare-state.json"),
          FAKE_WRANGLER_LOG: log,
          FAKE_WRANGLER_URL: f.url,
          ...env,
        },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 60_000,
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => {
      const calls = existsSync(log)
        ? readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Call)
        : [];
      done({ code: code ?? 1, stdout, stderr, calls });
    });
  });
}
const commands = (calls: Call[]) => calls.map((c) => c.args.filter((a) => !a.startsWith("/")).join(" "));

describe("npm run cloudflare:setup", () => {
  it("--dry-run prints every command in order, runs none, writes nothing, exits 0", async () => {
    const r = await setup(["--dry-run", "--email", "owner@example.test"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.calls).toEqual([]);
    expect(existsSync(join(dir, "wrangler.production.toml"))).toBe(false);
    const printed = r.stdout
      .split("\n")
      .filter((l) => l.startsWith("$ "))
      .map((l) => l.replace(/--config \S+/, "--config <out>"));
    expect(printed).toEqual([
      "$ wrangler whoami",
      "$ wrangler d1 list --json",
      "$ wrangler d1 create switchyard",
      "$ wrangler kv namespace list",
      "$ wrangler kv namespace create switchyard-catalog",
      "$ wrangler queues info switchyard-settles",
      "$ wrangler queues create switchyard-settles",
      "$ wrangler queues info switchyard-settles-dead",
      "$ wrangler queues create switchyard-settles-dead",
      "$ wrangler queues info switchyard-records",
      "$ wrangler queues create switchyard-records",
      "$ wrangler queues info switchyard-records-dead",
      "$ wrangler queues create switchyard-records-dead",
      "$ wrangler queues info switchyard-alerts",
      "$ wrangler queues create switchyard-alerts",
      "$ wrangler queues info switchyard-alerts-dead",
      "$ wrangler queues create switchyard-alerts-dead",
      "$ wrangler queues info switchyard-traces",
      "$ wrangler queues create switchyard-traces",
      "$ wrangler queues info switchyard-traces-dead",
      "$ wrangler queues create switchyard-traces-dead",
      "$ wrangler r2 bucket info switchyard-records",
      "$ wrangler r2 bucket create switchyard-records",
      "$ wrangler d1 migrations apply DB --remote --config <out>",
      "$ wrangler secret list --format json --config <out>",
      "$ wrangler deploy --config <out> --secrets-file <secrets.json>",
      "$ GET https://switchyard.<your-subdomain>.workers.dev/admin/accounts/owner@example.test   (exists? then nothing is created)",
      '$ POST https://switchyard.<your-subdomain>.workers.dev/admin/accounts {"email":"owner@example.test","credits":0}',
      '$ POST https://switchyard.<your-subdomain>.workers.dev/admin/keys {"account":"owner@example.test","management":true,"label":"owner"}',
      "$ POST https://switchyard.<your-subdomain>.workers.dev/admin/accounts/owner@example.test/sign-in-link   (the owner's one-time way into the console)",
    ]);
  });

  it("provisions everything once, deploys with the secrets, bootstraps the first account; a re-run reuses it all", async () => {
    const env = { SWITCHYARD_ADMIN_TOKEN: DEV_ADMIN_TOKEN, CARRIER_KEY_GROQ: "gsk_test", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" };
    const first = await setup(["--email", "owner@example.test", "--credits", "5"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(commands(first.calls)).toEqual([
      "whoami",
      "d1 list --json",
      "d1 create switchyard",
      "d1 list --json",
      "kv namespace list",
      "kv namespace create switchyard-catalog",
      "kv namespace list",
      "queues info switchyard-settles",
      "queues create switchyard-settles",
      "queues info switchyard-settles-dead",
      "queues create switchyard-settles-dead",
      "queues info switchyard-records",
      "queues create switchyard-records",
      "queues info switchyard-records-dead",
      "queues create switchyard-records-dead",
      "queues info switchyard-alerts",
      "queues create switchyard-alerts",
      "queues info switchyard-alerts-dead",
      "queues create switchyard-alerts-dead",
      "queues info switchyard-traces",
      "queues create switchyard-traces",
      "queues info switchyard-traces-dead",
      "queues create switchyard-traces-dead",
      "r2 bucket info switchyard-records",
      "r2 bucket create switchyard-records",
      "d1 migrations apply DB --remote --config",
      "secret list --format json --config",
      "deploy --config --secrets-file",
    ]);
    expect(first.calls.at(-1)!.secrets).toEqual([
      "ADMIN_TOKEN",
      "BYOK_ENCRYPTION_KEYS",
      "CARRIER_KEY_GROQ",
      "REASONING_SEAL_KEY",
      "STRIPE_SECRET_KEY",
      "STRIPE_WEBHOOK_SECRET",
    ]);
    expect(first.stdout).toContain("payments: Stripe (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET)");
    const config = readFileSync(join(dir, "wrangler.production.toml"), "utf8");
    const state = JSON.parse(readFileSync(join(dir, "cloudflare-state.json"), "utf8")) as { d1: Array<{ uuid: string }>; kv: Array<{ id: string }> };
    expect(config).toContain(`database_id = "${state.d1[0]!.uuid}"`);
    expect(config).toContain(`id = "${state.kv[0]!.id}"`);
    expect(config).not.toContain("00000000-0000-0000-0000-000000000000");
    // The management key it printed, once, manages the new account's keys.
    const key = /Management key of owner@example\.test[^:]*: (sk-sy-v1-[0-9a-f]{64})/.exec(first.stdout)?.[1];
    expect(key).toBeDefined();
    expect((await fetch(`${f.url}/api/v1/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(await f.admin.request("GET", "/accounts/owner%40example.test")).toMatchObject({ total_credits: 5 });
    // The sign-in link it printed, once, takes the owner into the console, to choose a password; once only.
    const link = new RegExp(`Sign in to the console as owner@example\\.test[^\\n]*: (${f.url}/sign-in/link#\\S+)`).exec(first.stdout)?.[1];
    expect(link, first.stdout).toBeDefined();
    expect(await signInWithLink(link!)).toEqual({ status: 303, location: "/settings/password", session: true });
    expect((await signInWithLink(link!)).status).toBe(400);

    const again = await setup(["--email", "owner@example.test", "--credits", "5"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(commands(again.calls).filter((c) => c.includes("create"))).toEqual([]);
    expect(readFileSync(join(dir, "wrangler.production.toml"), "utf8")).toBe(config);
    expect(again.stdout).toContain("is up to date");
    expect(again.stdout).toContain("account owner@example.test exists: kept");
    expect(again.stdout).not.toMatch(/sk-sy-v1-|sign-in\/link#/);
    const keys = await f.admin.request<{ data: unknown[] }>("GET", "/accounts/owner%40example.test/keys");
    expect(keys.data).toHaveLength(1);
  });

  it("without SWITCHYARD_ADMIN_TOKEN it generates one on the first run and keeps it after", async () => {
    const fresh = mkdtempSync(join(dir, "fresh-"));
    const env = { FAKE_WRANGLER_STATE: join(fresh, "state.json") };
    const first = await setup(["--out", join(fresh, "w.toml"), "--sign-up", "closed"], env);
    expect(first.code, first.stderr).toBe(0);
    // --sign-up goes into the generated config's [vars], and later runs keep it.
    expect(readFileSync(join(fresh, "w.toml"), "utf8")).toMatch(/^\[vars\]\nSIGN_UP = "closed"$/m);
    expect(first.stdout).toMatch(/Admin token \(set as the ADMIN_TOKEN secret[^:]*: [0-9a-f]{64}/);
    expect(first.calls.at(-1)!.secrets).toEqual(["ADMIN_TOKEN", "BYOK_ENCRYPTION_KEYS", "REASONING_SEAL_KEY"]);
    expect(first.stdout).toContain("payments: off until STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are both given");
    const second = await setup(["--out", join(fresh, "w.toml")], env);
    expect(second.stdout).toContain("ADMIN_TOKEN is set: kept");
    expect(second.stdout).toContain("console sign-up: closed");
    expect(readFileSync(join(fresh, "w.toml"), "utf8")).toContain('SIGN_UP = "closed"');
    const wrong = await setup(["--out", join(fresh, "w.toml"), "--sign-up", "maybe"], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("--sign-up must be open, invite-only or closed");
    expect(second.stdout).toContain("REASONING_SEAL_KEY is set: kept");
    expect(second.stdout).toContain("BYOK_ENCRYPTION_KEYS is set: kept");
    expect(second.calls.at(-1)!.args).not.toContain("--secrets-file");
  });

  it("--check calls the deployment once per surface and says what works; a bad key or an unreachable origin is a FAIL, exit 1", async () => {
    const { key, email } = await newAccount(f, 2);
    const good = await setup(["--check", "--url", f.url, "--key", key], { SWITCHYARD_ADMIN_TOKEN: DEV_ADMIN_TOKEN });
    expect(good.code, good.stdout + good.stderr).toBe(0);
    expect(good.calls).toEqual([]); // no wrangler: nothing provisioned
    const lines = good.stdout.split("\n").map((l) => l.trim());
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ok +API +GET \/api\/v1\/models lists \d+ models$/),
        `ok    console  ${f.url}/ answers; sign-up is open (SIGN_UP)`,
        'ok    key      GET /api/v1/key: the key works ("default"); its account: $2 of credits, $0 used',
        "ok    admin    GET /admin/accounts: the admin token works",
        "Everything checked works.",
      ]),
    );
    expect(good.stdout).not.toContain(key);
    expect(email).toBeDefined();

    const bad = await setup(["--check", "--url", f.url, "--key", "sk-sy-v1-" + "0".repeat(64)]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/FAIL +key +GET \/api\/v1\/key: HTTP 401/);
    expect(bad.stdout).toContain("Something does not work");

    const gone = await setup(["--check", "--url", "http://127.0.0.1:9"]);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toMatch(/FAIL +API +GET \/api\/v1\/models: unreachable/);
    expect((await setup(["--check"])).stderr).toContain("--check needs --url");
  });
});
