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

// The slip every other base URL invites: ANTHROPIC_BASE_URL ending in /v1 (Claude Code adds /v1/messages
// itself), or Codex's base_url without it. Each agent must show its user the base URL meant (src/api/wrong-path.ts);
// Claude Code had said the model "may not exist" (it shows its own words for any 404).
describe("agents at a wrong base URL", () => {
  it.each(["/api/v1", ""])("Claude Code at ANTHROPIC_BASE_URL=<origin>%s: fails naming ANTHROPIC_BASE_URL=<origin>/api", async (suffix) => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "cc-wrong-"));
    const { code, stderr, stdout } = await run(
      bin("claude"),
      ["-p", "Say hello [sim tokens=6]"],
      { HOME: cwd, ANTHROPIC_BASE_URL: `${f.url}${suffix}`, ANTHROPIC_AUTH_TOKEN: account.key },
      cwd,
    );
    expect(code).not.toBe(0);
    const output = stderr + stdout;
    expect(output).toContain(`No route at POST ${suffix}/v1/messages: did you mean POST /api/v1/messages?`);
    expect(output).toContain(`ANTHROPIC_BASE_URL=${f.url}/api)`);
    expect(output).not.toContain("may not exist");
  });

  it("Codex at base_url <origin>/api: fails naming <origin>/api/v1", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "codex-wrong-"));
    const { code, stderr, stdout } = await run(
      bin("codex"),
      ["exec", "--skip-git-repo-check", "Say hello"],
      codexEnv(f, cwd, account.key, `${f.url}/api`),
      cwd,
    );
    expect(code).not.toBe(0);
    expect(stderr + stdout).toContain(
      `No route at POST /api/responses: did you mean POST /api/v1/responses? The base URL for OpenAI and OpenRouter SDKs and Codex is ${f.url}/api/v1.`,
    );
  });
});
