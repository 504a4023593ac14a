import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalService, runCron, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";

// The Cron Trigger under `npm start`: wrangler dev runs it only when asked (--test-scheduled), which
// the local service does once a minute; here it is asked once, by hand.
let service: LocalService;
let state: string;
let admin: AdminClient;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-cron-"));
  // A 1 ms health memo: the chat request below reads the (empty) snapshot, and /endpoints must see the fold's at once.
  service = await startLocalService({ port: 0, persistTo: state, quiet: true, cronEveryMs: 0, vars: { HEALTH_MEMO_MS: "1" } });
  admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
});
afterAll(async () => {
  await service?.stop();
  rmSync(state, { recursive: true, force: true });
});

const MODEL = "mistralai/mistral-nemo";
type Endpoint = { provider_name: string; uptime_last_5m: number | null; latency_last_30m: { p50: number } | null };
const endpoints = async (key?: string) =>
  (
    (await (await fetch(`${service.url}/api/v1/models/${MODEL}/endpoints`, key ? { headers: { authorization: `Bearer ${key}` } } : {})).json()) as {
      data: { endpoints: Endpoint[] };
    }
  ).data.endpoints;

describe("the Cron Trigger under npm start", () => {
  it("folds endpoint health from real traffic's carrier attempts when run", async () => {
    const a = await admin.request<{ id: string }>("POST", "/accounts", { email: `cron-${Date.now()}@example.test`, credits: 1 });
    const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: a.id });
    const res = await fetch(`${service.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi [sim tokens=3]" }] }),
    });
    expect(res.status).toBe(200);
    const served = ((await res.json()) as { provider: string }).provider;

    // Bounded wait until the record has left the ledger for D1.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const audit = await admin.request<{ records: number; records_pending: number }>("GET", `/accounts/${a.id}/audit`);
      if (audit.records === 1 && audit.records_pending === 0) break;
      if (Date.now() > deadline) throw new Error("the record never reached D1");
      await new Promise((r) => setTimeout(r, 100));
    }
    // The record's attempts reached endpoint_attempts with it; only the Cron Trigger folds them into
    // the health snapshot. An isolate re-reads it in the background: the first read after may serve the old one.
    expect((await endpoints()).find((e) => e.provider_name === served)?.uptime_last_5m).toBeNull();
    await runCron(service.url);
    const until = Date.now() + 10_000;
    let mine = (await endpoints()).find((e) => e.provider_name === served);
    while (mine?.uptime_last_5m === null && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
      mine = (await endpoints()).find((e) => e.provider_name === served);
    }
    expect(mine).toMatchObject({ provider_name: served, uptime_last_5m: 100, latency_last_30m: null });
    // Time to first token, in ms, for a caller with a key.
    expect((await endpoints(key)).find((e) => e.provider_name === served)?.latency_last_30m?.p50).toBeGreaterThanOrEqual(0);
  });
});
