import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalService, type LocalService } from "../../scripts/local-service.ts";
import { signInWithLink } from "./sign-in-link";

// `npm run admin -- …` as an operator runs it, against the service as `npm start` runs it.
let service: LocalService;
let state: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-admin-cli-"));
  service = await startLocalService({ port: 0, persistTo: state, quiet: true });
});
afterAll(async () => {
  await service?.stop();
  rmSync(state, { recursive: true, force: true });
});

/** Runs the admin CLI; resolves with its exit code and the one JSON object it prints. */
function admin(...args: string[]): Promise<{ code: number; out: Record<string, unknown> }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args, "--url", service.url], { timeout: 30_000 }, (err, stdout) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      let out: Record<string, unknown> = {};
      try {
        out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Record<string, unknown>;
      } catch {
        out = { unparsable: stdout };
      }
      resolve({ code, out });
    });
  });
}

describe("npm run admin", () => {
  it("creates an account with --credits 0, grants once per --idempotency-key, sets and removes a key's limit", async () => {
    const email = `cli-${Date.now()}@example.test`;
    expect(await admin("create-account", "--email", email, "--credits", "0")).toEqual({ code: 0, out: expect.objectContaining({ email, total_credits: 0 }) });

    const first = await admin("grant-credits", "--account", email, "--usd", "2", "--idempotency-key", "inv-1");
    expect(first).toEqual({ code: 0, out: expect.objectContaining({ grant_id: "admin:inv-1", applied: true, total_credits: 2 }) });
    const repeat = await admin("grant-credits", "--account", email, "--usd", "2", "--idempotency-key", "inv-1");
    expect(repeat).toEqual({ code: 0, out: expect.objectContaining({ grant_id: "admin:inv-1", applied: false, total_credits: 2 }) });
    expect((await admin("audit-account", "--account", email)).out).toMatchObject({ credits_nano: 2_000_000_000, grants: 1, grants_nano: 2_000_000_000 });

    const { out: key } = await admin("create-key", "--account", email);
    const hash = key.hash as string;
    expect((await admin("set-key-limit", "--hash", hash, "--limit", "1.5")).out).toMatchObject({ hash, limit: 1.5 });
    expect((await admin("set-key-limit", "--hash", hash, "--limit", "none")).out).toMatchObject({ hash, limit: null });
  });

  it("create-key --management makes a management key, printed like any new key: it manages keys through /keys and runs no completions", async () => {
    const email = `cli-mgmt-${Date.now()}@example.test`;
    expect((await admin("create-account", "--email", email, "--credits", "1")).code).toBe(0);
    const created = await admin("create-key", "--account", email, "--management", "--label", "provisioner");
    expect(created.code).toBe(0);
    expect(Object.keys(created.out).sort()).toEqual(Object.keys((await admin("create-key", "--account", email)).out).sort());
    expect(created.out).toMatchObject({ name: "provisioner", is_management: true, limit: null, disabled: false });
    const key = created.out.key as string;
    expect(key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const self = (await (await fetch(`${service.url}/api/v1/key`, { headers: auth })).json()) as { data: { is_management_key: boolean } };
    expect(self.data.is_management_key).toBe(true);
    const made = await fetch(`${service.url}/api/v1/keys`, { method: "POST", headers: auth, body: JSON.stringify({ name: "from the cli's key" }) });
    expect(made.status).toBe(201);
    const chat = await fetch(`${service.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: "openai/gpt-oss-20b", messages: [{ role: "user", content: "x" }] }),
    });
    expect(chat.status).toBe(403);
    // A management key takes no limit.
    expect(await admin("create-key", "--account", email, "--management", "--limit", "5")).toEqual({
      code: 2,
      out: { error: "--management keys take no --limit: they run no completions" },
    });
  });

  it("sign-in-link prints a one-time link into the console for an account made here (no password); invite, a sign-up link", async () => {
    const email = `cli-link-${Date.now()}@example.test`;
    expect((await admin("create-account", "--email", email)).code).toBe(0);
    const { code, out } = await admin("sign-in-link", "--account", email);
    expect(code).toBe(0);
    expect(out).toMatchObject({ email, has_password: false, url: expect.stringMatching(new RegExp(`^${service.url}/sign-in/link#[A-Za-z0-9_-]{43}$`)) });
    expect(await signInWithLink(out.url as string)).toEqual({ status: 303, location: "/settings/password", session: true });
    expect((await signInWithLink(out.url as string)).status).toBe(400); // once only
    expect(await admin("sign-in-link", "--account", "nobody@example.test")).toEqual({ code: 1, out: { error: "404: No account nobody@example.test." } });
    expect(await admin("sign-in-link")).toEqual({ code: 2, out: { error: "--account is required" } });

    const invite = await admin("invite");
    expect(invite).toEqual({ code: 0, out: expect.objectContaining({ sign_up: "open", url: expect.stringMatching(new RegExp(`^${service.url}/sign-up#`)) }) });
  });

  it("refuses bad amounts before sending anything (exit 2, a JSON error)", async () => {
    expect(await admin("create-account", "--email", "neg@example.test", "--credits=-1")).toEqual({
      code: 2,
      out: { error: "--credits must be a non-negative number of USD" },
    });
    expect(await admin("grant-credits", "--account", "x@example.test", "--usd", "0")).toEqual({
      code: 2,
      out: { error: "--usd must be a positive number of USD" },
    });
    expect(await admin("set-key-limit", "--hash", "f".repeat(64), "--limit", "lots")).toEqual({
      code: 2,
      out: { error: "--limit must be a positive number of USD" },
    });
    expect((await admin("show-account", "--account", "neg@example.test")).code).toBe(1); // never created
  });

  it("--help, help and help <command> exit 0 with the usage; an unknown command's help exits 2", async () => {
    const run = (...args: string[]) =>
      new Promise<{ code: number; stdout: string }>((resolve) =>
        execFile(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args], { timeout: 30_000 }, (err, stdout) =>
          resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout }),
        ),
      );
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const r = await run(...args);
      expect(r.code).toBe(0);
      for (const command of ["create-account", "grant-credits", "list-accounts", "list-keys", "storage"]) expect(r.stdout).toContain(command);
    }
    const one = await run("help", "list-keys");
    expect(one).toEqual({ code: 0, stdout: expect.stringMatching(/^usage: npm run admin -- list-keys --account/) });
    expect(one.stdout).not.toContain("grant-credits");
    expect((await run("help", "nope")).code).toBe(2);
  });

  it("list-accounts and list-keys page through everything once, and never show a key", async () => {
    const stamp = Date.now();
    const emails = [0, 1, 2].map((i) => `cli-list-${stamp}-${i}@example.test`);
    for (const email of emails) expect((await admin("create-account", "--email", email)).code).toBe(0);
    const seen: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const { code, out } = await admin("list-accounts", "--page-size", "2", "--offset", String(offset));
      expect(code).toBe(0);
      const data = out.data as Array<{ email: string }>;
      expect(data.length).toBeLessThanOrEqual(2);
      seen.push(...data.map((a) => a.email));
      offset = out.next_offset as number | null;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(emails));

    const made = [
      (await admin("create-key", "--account", emails[0]!, "--label", "a")).out,
      (await admin("create-key", "--account", emails[0]!, "--label", "b")).out,
    ];
    const first = await admin("list-keys", "--account", emails[0]!, "--page-size", "1");
    const second = await admin("list-keys", "--account", emails[0]!, "--page-size", "1", "--offset", String(first.out.next_offset));
    expect([...(first.out.data as object[]), ...(second.out.data as object[])]).toEqual(
      made.map((k) => expect.objectContaining({ hash: k.hash, name: k.name })),
    );
    expect(second.out.next_offset).toBeNull();
    expect(JSON.stringify([first.out, second.out])).not.toContain(made[0]!.key as string);
    expect(await admin("list-keys", "--account", emails[0]!, "--page-size", "0")).toEqual({
      code: 2,
      out: { error: "--page-size must be a whole number from 1 to 500" },
    });
  });

  it("storage prints the service's D1 and archive figures (wrangler dev's local D1 and R2)", async () => {
    const { code, out } = await admin("storage");
    expect(code).toBe(0);
    expect(Object.keys(out).sort()).toEqual(
      [
        "archive_bytes",
        "archive_objects",
        "archive_parts_writing",
        "archive_records",
        "d1_limit_bytes",
        "d1_percent",
        "d1_size_bytes",
        "d1_warn_percent",
        "dead_record_batch_records",
        "dead_record_batches",
        "endpoint_attempts",
        "endpoint_minute_rows",
        "generations_in_d1",
        "record_rollup_rows",
        "oldest_record_in_d1",
        "retention_days",
      ].sort(),
    );
    expect(out).toMatchObject({ d1_limit_bytes: 10_000_000_000, d1_warn_percent: 80, retention_days: 30, archive_parts_writing: 0, dead_record_batches: 0 });
    expect(out.d1_size_bytes).toBeGreaterThan(0);
  });
});
