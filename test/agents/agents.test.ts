import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VOCABULARY } from "../../simulator/tokens.ts";
import { startServiceFixture, newAccount, type ServiceFixture } from "../node/service-fixture";
import { bin, codexEnv, run, storedRecords } from "./agent-cli";

// The coding agents themselves, headless and unchanged, against the service started as `npm start` starts
// it: Claude Code on /messages (ANTHROPIC_BASE_URL), Codex on /responses (a model provider with
// wire_api = "responses"), each on an Anthropic model, an OpenAI model and an open model. Each must exit
// 0 with the simulated answer (words of the simulator's vocabulary), and the request must be billed and
// recorded under its inbound API. Then real tool loops (docs/agents.md): the simulated model calls one of the
// agent's own tools (`[sim tool_call=<name> args=<base64url JSON>]`), the agent runs it here, the result goes
// back, the model answers — on each carrier protocol. Their own project: `npx vitest run --project agents`.
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

/** The words of an agent's answer; each must be one the simulator writes. */
function simulatedWords(stdout: string): string[] {
  const words = stdout.trim().split(/\s+/).filter(Boolean);
  expect(words.length).toBeGreaterThan(0);
  expect(words.filter((w) => !WORDS.has(w))).toEqual([]);
  return words;
}

type Row = { model: string; inbound_api: string; status: number; cost_nano: number };
const records = (accountId: string, api: string) => storedRecords<Row>(f, accountId, api);

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
      ["exec", "--skip-git-repo-check", "-m", model, "Say hello [sim tokens=6]"],
      codexEnv(f, cwd, account.key),
      cwd,
    );
    expect(code, stderr).toBe(0);
    simulatedWords(stdout);
    const rows = (await records(account.id, "responses")).filter((r) => r.inbound_api === "responses" && r.model === model);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 200 && r.cost_nano > 0)).toBe(true);
  });
});

// One model per carrier protocol: Anthropic, OpenAI chat, Gemini, and an open model on OpenAI-compatible carriers
// (groq, cerebras, deepinfra: the only one of the four with more than one carrier, so its sticky session means something).
const LOOP_MODELS = ["anthropic/claude-haiku-4.5", "openai/gpt-5-mini", "google/gemini-2.5-flash", "meta-llama/llama-3.1-8b-instruct"];

/** The directive that makes the simulated model call `tool` with exactly `args`. */
const toolCall = (tool: string, args: Record<string, unknown>) => `[sim tool_call=${tool} args=${Buffer.from(JSON.stringify(args)).toString("base64url")}]`;

type LoopRow = Row & { finish_reason: string | null; provider_name: string | null; session_id: string | null; tokens_cached: number };
type Audit = { usage_nano: number; records_cost_nano: number; records_pending: number };

/**
 * The records of one agent run's tool loop (this API and model): waits (bounded) until every settled request
 * is stored (the audit: nothing pending, the records' cost is the usage) and the loop's two turns — the
 * tool call and the answer after its result — are among them.
 */
async function loopRecords(accountId: string, api: string, model: string): Promise<LoopRow[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const audit = await f.admin.request<Audit>("GET", `/accounts/${accountId}/audit`);
    const all = (await f.admin.request<{ data: LoopRow[] }>("GET", `/accounts/${accountId}/records?limit=500`)).data;
    const rows = all.filter((r) => r.inbound_api === api && r.model === model);
    const stored = audit.records_pending === 0 && audit.usage_nano > 0 && audit.records_cost_nano === audit.usage_nano;
    const loop = rows.some((r) => r.finish_reason === "tool_calls") && rows.some((r) => r.finish_reason === "stop");
    if ((stored && loop) || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Every turn of the loop billed and recorded under its API, one session, served by one carrier. */
function expectOneSessionOnOneCarrier(rows: LoopRow[]): void {
  expect(rows.map((r) => r.finish_reason)).toEqual(expect.arrayContaining(["tool_calls", "stop"]));
  for (const r of rows) expect(r).toMatchObject({ status: 200, cost_nano: expect.any(Number) });
  expect(rows.every((r) => r.cost_nano > 0)).toBe(true);
  const sessions = new Set(rows.map((r) => r.session_id));
  expect(sessions.size).toBe(1);
  expect([...sessions][0]).toEqual(expect.any(String));
  expect(new Set(rows.map((r) => r.provider_name)).size).toBe(1);
  // One carrier kept the session's cache warm: the turn after the tool result read its prompt from the cache.
  const after = rows.filter((r) => r.finish_reason === "stop");
  expect(
    after.some((r) => r.tokens_cached > 0),
    JSON.stringify(rows.map((r) => [r.finish_reason, r.tokens_cached])),
  ).toBe(true);
}

/** `claude -p` as a person runs it: only the base URL and a key, a temporary HOME and cwd (its session goes as X-Claude-Code-Session-Id). */
function claude(cwd: string, key: string, args: string[]) {
  return run(
    bin("claude"),
    args,
    {
      HOME: cwd,
      ANTHROPIC_BASE_URL: `${f.url}/api`,
      ANTHROPIC_AUTH_TOKEN: key,
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    cwd,
  );
}

describe.each(LOOP_MODELS)("Claude Code tool loops on %s", (model) => {
  it("creates a file through Write (--permission-mode acceptEdits): the file has exactly the content; each turn billed under /messages, one carrier", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "cc-write-"));
    const file = join(cwd, "notes.txt");
    const content = "Written by Claude Code\nthrough the router.\n";
    const prompt = `Create notes.txt ${toolCall("Write", { file_path: file, content })}`;
    const { code, stdout, stderr } = await claude(cwd, account.key, ["-p", prompt, "--model", model, "--permission-mode", "acceptEdits"]);
    expect(code, stderr + stdout).toBe(0);
    simulatedWords(stdout);
    expect(readFileSync(file, "utf8")).toBe(content);
    expectOneSessionOnOneCarrier(await loopRecords(account.id, "messages", model));
  });

  it("runs a command through Bash (--allowedTools Bash): the file it writes exists; each turn billed under /messages, one carrier", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "cc-bash-"));
    const prompt = `Run it ${toolCall("Bash", { command: "printf 'bash ran' > ran.txt", description: "Write ran.txt" })}`;
    const { code, stdout, stderr } = await claude(cwd, account.key, ["-p", prompt, "--model", model, "--allowedTools", "Bash"]);
    expect(code, stderr + stdout).toBe(0);
    simulatedWords(stdout);
    expect(readFileSync(join(cwd, "ran.txt"), "utf8")).toBe("bash ran");
    expectOneSessionOnOneCarrier(await loopRecords(account.id, "messages", model));
  });
});

describe.each(LOOP_MODELS)("Codex tool loop on %s", (model) => {
  it("codex exec runs exec_command (approvals and sandbox bypassed): the file it writes exists; each turn billed under /responses, one carrier", async () => {
    const account = await newAccount(f, 10);
    const cwd = mkdtempSync(join(home, "codex-exec-"));
    const prompt = `Run it ${toolCall("exec_command", { cmd: "printf 'codex ran' > ran.txt" })}`;
    const { code, stdout, stderr } = await run(
      bin("codex"),
      ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", model, prompt],
      codexEnv(f, cwd, account.key),
      cwd,
    );
    expect(code, stderr).toBe(0);
    simulatedWords(stdout);
    expect(readFileSync(join(cwd, "ran.txt"), "utf8")).toBe("codex ran");
    expectOneSessionOnOneCarrier(await loopRecords(account.id, "responses", model));
  });
});
