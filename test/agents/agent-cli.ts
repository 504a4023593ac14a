import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ServiceFixture } from "../node/service-fixture";

/** The pinned agent CLIs (devDependencies). */
export const bin = (name: "claude" | "codex") => resolve("node_modules/.bin", name);

/** Runs an agent CLI (bounded in time) with only the environment given and stdin closed (Codex reads it otherwise); its exit code and output. */
export function run(file: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(file, args, { env: { PATH: process.env.PATH ?? "", ...env }, cwd, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

/**
 * Codex's environment with a model provider configured exactly as Codex's docs describe one (docs/agents.md):
 * `config.toml` in `codexHome` with model_provider, base_url (the right one unless another is given), env_key and wire_api — nothing else.
 */
export function codexEnv(f: ServiceFixture, codexHome: string, key: string, baseUrl = `${f.url}/api/v1`): Record<string, string> {
  writeFileSync(
    join(codexHome, "config.toml"),
    [
      'model_provider = "switchyard"',
      "",
      "[model_providers.switchyard]",
      'name = "Switchyard"',
      `base_url = "${baseUrl}"`,
      'env_key = "SWITCHYARD_API_KEY"',
      'wire_api = "responses"',
      "",
    ].join("\n"),
  );
  return { HOME: codexHome, CODEX_HOME: codexHome, SWITCHYARD_API_KEY: key };
}

/** The account's stored records (the admin's list-records), once one of this API is stored (bounded). */
export async function storedRecords<R extends { inbound_api: string }>(f: ServiceFixture, accountId: string, api: string): Promise<R[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = (await f.admin.request<{ data: R[] }>("GET", `/accounts/${accountId}/records?limit=500`)).data;
    if (rows.some((r) => r.inbound_api === api) || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 250));
  }
}
