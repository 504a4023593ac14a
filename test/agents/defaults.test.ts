import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startServiceFixture, newAccount, type ServiceFixture } from "../node/service-fixture";

// Each agent exactly as a new user runs it: nothing but the base URL and a key (Claude Code), or a model
// provider configured as Codex's docs describe it (Codex) — no model named, no extra flags. Each asks for
// its own default model by the provider's id (Claude Code: claude-opus-5-5 and Anthropic's ids for its side
// tasks; Codex: gpt-6.1-sol), which the catalog declares as aliases (docs/agents.md).
let f: ServiceFixture;
let home: string;

beforeAll(async () => {
  f = await startServiceFixture("agents-defaults");
  home = mkdtempSync(join(tmpdir(), "switchyard-agent-defaults-"));
});

afterAll(async () => {
  await f?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const bin = (name: string) => resolve("node_modules/.bin", name);

function run(file: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(file, args, { env: { PATH: process.env.PATH ?? "", ...env }, cwd, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

type Row = { model: string; inbound_api: string; status: number; cost_nano: number };
async function records(accountId: string, api: string): Promise<Row[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = (await f.admin.request<{ data: Row[] }>("GET", `/accounts/${accountId}/records?limit=500`)).data;
    if (rows.some((r) => r.inbound_api === api) || Date.now() > deadline) return rows.filter((r) => r.inbound_api === api);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("agents at their default models", () => {
  it("Claude Code with only ANTHROPIC_BASE_URL and a key exits 0; its turns are billed under catalog ids", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "cc-"));
    const { code, stderr, stdout } = await run(
      bin("claude"),
      ["-p", "Say hello [sim tokens=6]"],
      { HOME: cwd, ANTHROPIC_BASE_URL: `${f.url}/api`, ANTHROPIC_AUTH_TOKEN: account.key },
      cwd,
    );
    expect(code, stderr + stdout).toBe(0);
    const rows = await records(account.id, "messages");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 200 && r.cost_nano > 0)).toBe(true);
    expect(rows.map((r) => r.model)).toContain("anthropic/claude-opus-5.5");
  });

  it("Codex configured only as its docs say (model_provider, base_url, env_key, wire_api) exits 0 at its default model", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "codex-"));
    writeFileSync(
      join(cwd, "config.toml"),
      [
        'model_provider = "switchyard"',
        "",
        "[model_providers.switchyard]",
        'name = "Switchyard"',
        `base_url = "${f.url}/api/v1"`,
        'env_key = "SWITCHYARD_API_KEY"',
        'wire_api = "responses"',
        "",
      ].join("\n"),
    );
    const { code, stderr, stdout } = await run(
      bin("codex"),
      ["exec", "--skip-git-repo-check", "Say hello [sim tokens=6]"],
      { HOME: cwd, CODEX_HOME: cwd, SWITCHYARD_API_KEY: account.key },
      cwd,
    );
    expect(code, stderr + stdout).toBe(0);
    const rows = await records(account.id, "responses");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 200 && r.cost_nano > 0)).toBe(true);
    expect(rows.map((r) => r.model)).toContain("openai/gpt-6.1-sol");
  });
});
