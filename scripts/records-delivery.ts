// `npm run records-delivery [-- --requests N] [--flush-delay-ms MS]`: how long a settled request's record
// takes to reach R2 under `npm start` (docs/storage.md, "Records"): the ledger's flush delay, the local
// queue's batch timeout and the consumer. One request at a time: after each answer the admin audit is
// polled (every 10 ms, bounded) until the account's `records_stored` counts it; prints the median, p90 and
// the largest, ms. Everything is on 127.0.0.1; every wait is bounded.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startLocalService, DEV_ADMIN_TOKEN } from "./local-service.ts";
import { AdminClient } from "./admin-client.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "30" }, "flush-delay-ms": { type: "string" } } });
const n = Number(values.requests);
const state = mkdtempSync(join(tmpdir(), "switchyard-delivery-"));
const vars: Record<string, string> = values["flush-delay-ms"] ? { RECORDS_FLUSH_DELAY_MS: values["flush-delay-ms"] } : {};
const service = await startLocalService({ port: 0, persistTo: state, quiet: true, cronEveryMs: 0, vars });
try {
  const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
  const a = await admin.request<{ id: string }>("POST", "/accounts", { email: `delivery-${Date.now()}@example.test`, credits: 5 });
  const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: a.id });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${service.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "openai/gpt-oss-20b", messages: [{ role: "user", content: `delivery ${i}` }] }),
    });
    await res.text();
    const answered = performance.now();
    const deadline = Date.now() + 120_000;
    for (;;) {
      const audit = await admin.request<{ records_stored: number }>("GET", `/accounts/${a.id}/audit`);
      if (audit.records_stored >= i + 1) break;
      if (Date.now() > deadline) throw new Error(`request ${i}: its record was not stored within 120 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
    times.push(performance.now() - answered);
  }
  times.sort((x, y) => x - y);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]!);
  console.log(
    `records-delivery: ${n} requests, RECORDS_FLUSH_DELAY_MS ${values["flush-delay-ms"] ?? "default (1000)"}: answer → stored in R2, ms: median ${at(0.5)}, p90 ${at(0.9)}, max ${Math.round(times.at(-1)!)}`,
  );
} finally {
  await service.stop();
  rmSync(state, { recursive: true, force: true });
}
