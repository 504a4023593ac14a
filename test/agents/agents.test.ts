import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { VOCABULARY } from "../../simulator/tokens.ts";
import { startServiceFixture, newAccount, type ServiceFixture } from "../node/service-fixture";

// The coding agents themselves, headless and unchanged, against the service started as `npm start` starts
// it: Claude Code on /messages (ANTHROPIC_BASE_URL), Codex on /responses (a model provider with
// wire_api = "responses"), each on an Anthropic model, an OpenAI model and an open model. Each must exit
// 0 with the simulated answer (words of the simulator's vocabulary), and the request must be billed and
// recorded under its inbound API. Their own project: `npx vitest run --project agents`.
let f: ServiceFixture;
let home: string;

beforeAll(async () => {
  f = await startServiceFixture("agents");
  home = mkdtempSync(join(tmpdir(), "switchyard-agent-home-"));
});

afterAll(async () => {
  await f?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const MODELS = ["anthropic/claude-haiku-4.5", "openai/gpt-5-mini", "meta-llama/llama-3.1-8b-instruct"];
const WORDS = new Set<string>(VOCABULARY);
const bin = (name: string) => resolve("node_modules/.bin", name);

/** Runs an agent CLI (bounded in time) with only the environment given and stdin closed (Codex reads it otherwise); its exit code and output. */
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

/** The words of an agent's answer; each must be one the simulator writes. */
function simulatedWords(stdout: string): string[] {
  const words = stdout.trim().split(/\s+/).filter(Boolean);
  expect(words.length).toBeGreaterThan(0);
  expect(words.filter((w) => !WORDS.has(w))).toEqual([]);
  return words;
}

type Row = { model: string; inbound_api: string; status: number; cost_nano: number };
/** The account's stored records (the admin's list-records), once one of this API is stored (bounded). */
async function records(accountId: string, api: string): Promise<Row[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = (await f.admin.request<{ data: Row[] }>("GET", `/accounts/${accountId}/records?limit=500`)).data;
    if (rows.some((r) => r.inbound_api === api) || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.each(MODELS)("Claude Code (claude -p) on %s", (model) => {
  it("exits 0 with the simulated answer; billed and recorded as /messages", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "cc-"));
    const { code, stdout, stderr } = await run(
      bin("claude"),
      ["-p", "Say hello [sim tokens=6]", "--model", model],
      {
        HOME: cwd,
        ANTHROPIC_BASE_URL: `${f.url}/api`,
        ANTHROPIC_AUTH_TOKEN: account.key,
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
      cwd,
    );
    expect(code, stderr).toBe(0);
    simulatedWords(stdout);
    const rows = (await records(account.id, "messages")).filter((r) => r.inbound_api === "messages" && r.model === model);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 200 && r.cost_nano > 0)).toBe(true);
  });
});

describe.each(MODELS)("Codex (codex exec) on %s", (model) => {
  it("exits 0 with the simulated answer; billed and recorded as /responses", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "codex-"));
    const { code, stdout, stderr } = await run(
      bin("codex"),
      [
        "exec",
        "--skip-git-repo-check",
        "-c",
        "model_provider=switchyard",
        "-c",
        'model_providers.switchyard.name="Switchyard"',
        "-c",
        `model_providers.switchyard.base_url="${f.url}/api/v1"`,
        "-c",
        'model_providers.switchyard.wire_api="responses"',
        "-c",
        'model_providers.switchyard.env_key="SWITCHYARD_API_KEY"',
        "-m",
        model,
        "Say hello [sim tokens=6]",
      ],
      { HOME: cwd, CODEX_HOME: cwd, SWITCHYARD_API_KEY: account.key },
      cwd,
    );
    expect(code, stderr).toBe(0);
    simulatedWords(stdout);
    const rows = (await records(account.id, "responses")).filter((r) => r.inbound_api === "responses" && r.model === model);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 200 && r.cost_nano > 0)).toBe(true);
  });
});
