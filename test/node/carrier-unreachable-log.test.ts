import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalService, DEV_ADMIN_TOKEN } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";

// A carrier this machine cannot reach (real carriers offline): `npm start`'s output says so in one line,
// naming the host and the reason, without workerd's native stack traces, without an "Uncaught" error (the
// Worker handles the failed fetch: it fails over, then answers 502), and without the key, prompt or query.
// `.invalid` never resolves (RFC 2606).

/** Resolves with the first line matching `re` among `lines` (as they come), or rejects after `ms`. */
function lineMatching(lines: string[], waiters: Array<() => void>, re: RegExp, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line matching ${re} within ${ms} ms:\n${lines.join("\n")}`)), ms);
    const check = () => {
      const found = lines.find((l) => re.test(l));
      if (found === undefined) return false;
      clearTimeout(timer);
      resolve(found);
      return true;
    };
    if (!check()) waiters.push(check);
  });
}

describe("npm start's output for an unreachable carrier", () => {
  it("is one line naming the host, no stack trace, no uncaught error, nothing of the request", async () => {
    const state = mkdtempSync(join(tmpdir(), "switchyard-unreachable-"));
    const lines: string[] = [];
    let waiters: Array<() => boolean> = [];
    const service = await startLocalService({
      port: 0,
      persistTo: join(state, "wrangler"),
      payments: "off",
      cronEveryMs: 0,
      vars: { CARRIER_BASE_URL_OVERRIDE: "https://carrier.invalid" },
      output: (line) => {
        lines.push(line);
        waiters = waiters.filter((w) => !w());
      },
    });
    try {
      service.showRequestLog();
      const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
      const account = await admin.request<{ id: string }>("POST", "/accounts", { email: "unreachable@example.test", credits: 5 });
      const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: account.id });
      const res = await fetch(`${service.url}/api/v1/chat/completions?secret_query=q-7f3a`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "openai/gpt-oss-20b", messages: [{ role: "user", content: "prompt-5e1c hello" }] }),
      });
      expect(res.status).toBe(502);
      expect(JSON.stringify(await res.json())).toContain("the carrier could not be reached");
      await lineMatching(lines, waiters, /POST \/api\/v1\/chat\/completions 502/, 30_000);
      await lineMatching(lines, waiters, /^carrier unreachable: carrier\.invalid /, 30_000);
      // A later request's log line: workerd's lines about the failed one (on its stderr) are in by then.
      await (await fetch(`${service.url}/api/v1/providers`)).arrayBuffer();
      await lineMatching(lines, waiters, /GET \/api\/v1\/providers 200/, 30_000);
      const text = lines.join("\n");
      expect(lines.filter((l) => l.includes("carrier.invalid"))).toEqual([
        "carrier unreachable: carrier.invalid (DNS lookup failed: Name or service not known)",
      ]);
      expect(text).not.toMatch(/stack:|Uncaught|internal error|kj\//);
      for (const secret of [key, "q-7f3a", "secret_query", "prompt-5e1c"]) expect(text).not.toContain(secret);
    } finally {
      await service.stop();
      rmSync(state, { recursive: true, force: true });
    }
  }, 180_000); // the service's start-up is part of this test
});
