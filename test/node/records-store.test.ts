import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalService, runCron, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";

// Records off D1 (docs/storage.md, "Records"), tried as a user would under `npm start`: wrangler dev's
// local queue, R2 and D1. Compaction is asked to merge at once (RECORDS_COMPACT_AFTER_MS 1) and run by hand.
let service: LocalService;
let state: string;
let admin: AdminClient;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-records-"));
  service = await startLocalService({ port: 0, persistTo: state, quiet: true, cronEveryMs: 0, vars: { RECORDS_COMPACT_AFTER_MS: "1" } });
  admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
});
afterAll(async () => {
  await service?.stop();
  rmSync(state, { recursive: true, force: true });
});

type Storage = Record<string, number>;
/** The D1 rows that records and health could add: records in D1, attempts, parts' index, rollups, health minutes, dead batches. */
const GROWING = ["generations_in_d1", "endpoint_attempts", "archive_objects", "record_rollup_rows", "endpoint_minute_rows", "dead_record_batches"];
const rowsOf = (s: Storage) => GROWING.reduce((n, k) => n + s[k]!, 0);
type Audit = { records: number; records_pending: number; records_cost_nano: number; usage_nano: number; records_in_d1: number };

describe("records under npm start", () => {
  it("400 requests grow D1 by far less than a row per request; every record is found through /generation; each audit holds", async () => {
    const accounts = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const a = await admin.request<{ id: string }>("POST", "/accounts", { email: `records-${i}-${Date.now()}@example.test`, credits: 5 });
        const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: a.id });
        return { id: a.id, key };
      }),
    );
    const before = await admin.request<Storage>("GET", "/storage");
    const ids: Array<{ id: string; key: string }> = [];
    const N = 400;
    for (let round = 0; round < N / 20; round++)
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const { key } = accounts[i % accounts.length]!;
          const res = await fetch(`${service.url}/api/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({
              model: i % 2 ? "openai/gpt-oss-20b" : "mistralai/mistral-nemo",
              messages: [{ role: "user", content: `record ${round}.${i}` }],
            }),
          });
          expect(res.status).toBe(200);
          ids.push({ id: ((await res.json()) as { id: string }).id, key });
        }),
      );
    // Stored: every account's records out of its ledger's outbox (bounded wait).
    const deadline = Date.now() + 60_000;
    let audits: Audit[] = [];
    for (;;) {
      audits = await Promise.all(accounts.map((a) => admin.request<Audit>("GET", `/accounts/${a.id}/audit`)));
      if (audits.every((a) => a.records === N / accounts.length && a.records_pending === 0)) break;
      if (Date.now() > deadline) throw new Error(`records not stored in time: ${JSON.stringify(audits)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const a of audits) expect(a).toMatchObject({ records_in_d1: 0, records_pending: 0, records_cost_nano: a.usage_nano });
    for (const { id, key } of ids) {
      const res = await fetch(`${service.url}/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status, id).toBe(200);
      expect(((await res.json()) as { data: { id: string } }).data.id).toBe(id);
    }
    await runCron(service.url); // compaction: each account-day's small objects become one
    const after = await admin.request<Storage>("GET", "/storage");
    const grown = rowsOf(after) - rowsOf(before);
    console.log(
      `records under npm start: ${N} requests grew D1 by ${grown} rows (${JSON.stringify(Object.fromEntries(GROWING.map((k) => [k, after[k]! - before[k]!])))})`,
    );
    expect(after.generations_in_d1).toBe(before.generations_in_d1);
    expect(after.endpoint_attempts).toBe(before.endpoint_attempts);
    // What is left grows with accounts, days, hours, models, keys, carriers and endpoint-minutes, not with requests.
    expect(grown).toBeLessThan(N / 5);
    // Compaction moved nothing out of reach.
    for (const a of accounts) expect(await admin.request<Audit>("GET", `/accounts/${a.id}/audit`)).toMatchObject({ records: N / accounts.length });
  });
});
