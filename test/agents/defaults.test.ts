import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServiceFixture, newAccount, type ServiceFixture } from "../node/service-fixture";
import { bin, codexEnv, run, storedRecords } from "./agent-cli";

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

type Row = { model: string; inbound_api: string; status: number; cost_nano: number };
const records = async (accountId: string, api: string) => (await storedRecords<Row>(f, accountId, api)).filter((r) => r.inbound_api === api);

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
    const { code, stderr, stdout } = await run(bin("codex"), ["exec", "--skip-git-repo-check", "Say hello [sim tokens=6]"], codexEnv(f, cwd, account.key), cwd);
    expect(code, stderr + stdout).toBe(0);
    const rows = await records(account.id, "responses");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 200 && r.cost_nano > 0)).toBe(true);
    expect(rows.map((r) => r.model)).toContain("openai/gpt-6.1-sol");
  });
});
