import { describe, it, expect, vi, afterEach } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import { archiveFromEnv, archiveRecords, type ArchiveOptions } from "../../src/generations/archive-records";
import { settings } from "../../src/settings";
import type { Env } from "../../src/env";
import { DAY, indexRows, seedDays } from "./archive-helpers";
import { admin, newAccount, ORIGIN } from "./helpers";

/** The Cron Trigger's archive run under these vars (the scheduled handler reads the settings once and passes them). */
const archiveWith = (e: Env, now: number) => archiveFromEnv(e, settings(e), now);

// Size and cost visible (issue 27): the audit counts archived records, /admin/storage shows D1 and the archive.
// Each test seeds its own account in its own year of 2011–2020 (records-archive.test.ts has 2001–2010): the
// archive takes the oldest records past retention over all accounts, so a test's clock reaches only its own
// year and older ones, whose records their tests archive before they end.
const year = (y: number) => Date.UTC(y, 0, 1);
const options = (now: number): ArchiveOptions => ({ now, retentionDays: 30, partRecords: 10_000, partsPerRun: 1_000, runMs: 600_000, concurrency: 4 });
const sum = (xs: readonly { costNano: number }[]) => xs.reduce((s, x) => s + x.costNano, 0);

type Audit = {
  records: number;
  records_cost_nano: number;
  records_pending: number;
  records_in_d1: number;
  records_archived: number;
  archive_objects: number;
  archive_bytes: number;
  usage_nano: number;
};
type Storage = {
  d1_size_bytes: number | null;
  d1_limit_bytes: number;
  d1_percent: number | null;
  d1_warn_percent: number;
  generations_in_d1: number;
  oldest_record_in_d1: string | null;
  endpoint_attempts: number;
  archive_objects: number;
  archive_bytes: number;
  archive_records: number;
  archive_parts_writing: number;
  retention_days: number;
};

/** The archive's whole index, as D1 has it. */
async function archiveIndex() {
  const { results } = await env.DB.prepare("SELECT key, state, records, bytes FROM archive_parts").all<{
    key: string;
    state: string;
    records: number;
    bytes: number;
  }>();
  return { archived: results.filter((r) => r.state === "archived"), writing: results.filter((r) => r.state === "writing") };
}

/** /admin/storage served with extra Worker vars (e.g. a tiny D1 size limit). */
async function storageWithVars(vars: Record<string, string>): Promise<Storage> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(ORIGIN + "/admin/storage", { headers: { authorization: "Bearer test-admin-token" } }), { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(200);
  return (await res.json()) as Storage;
}

afterEach(() => vi.restoreAllMocks());

describe("size and cost visible", () => {
  it("the audit counts records in D1 and in the archive: records and their cost unchanged when records leave D1", async () => {
    const { accountId } = await newAccount(1);
    const start = year(2011);
    const records = await seedDays(accountId, start, 40, 3);
    const before = await admin<Audit>(`/accounts/${accountId}/audit`);
    expect(before).toMatchObject({
      records: 120,
      records_cost_nano: sum(records),
      records_in_d1: 120,
      records_archived: 0,
      archive_objects: 0,
      archive_bytes: 0,
    });

    const now = start + 40 * DAY + 12 * 3_600_000; // days 0–9 are past the 30 days kept
    await archiveRecords(env.DB, env.ARCHIVE, options(now));
    const after = await admin<Audit>(`/accounts/${accountId}/audit`);
    const parts = (await indexRows(accountId)).filter((p) => p.state === "archived");
    expect(parts).toHaveLength(10);
    let bytes = 0;
    for (const p of parts) bytes += (await env.ARCHIVE.head(p.key))!.size;
    expect(after).toMatchObject({
      records: 120,
      records_cost_nano: sum(records),
      records_in_d1: 90,
      records_archived: 30,
      archive_objects: 10,
      archive_bytes: bytes,
    });
    expect(after.records_cost_nano - sum(records.filter((r) => r.createdAt >= start + 10 * DAY))).toBe(sum(records.slice(0, 30)));

    // Thirty days later the rest follows (and no record of this year is left for other tests).
    await archiveRecords(env.DB, env.ARCHIVE, options(now + 30 * DAY));
    expect(await admin<Audit>(`/accounts/${accountId}/audit`)).toMatchObject({
      records: 120,
      records_cost_nano: sum(records),
      records_in_d1: 0,
      records_archived: 120,
      archive_objects: 40,
    });
  });

  it("GET /admin/storage: D1's size, rows and oldest record, and the archive's objects, bytes and records as the index has them", async () => {
    const { accountId } = await newAccount();
    const start = year(2012);
    const records = await seedDays(accountId, start, 40, 2);
    const seeded = await admin<Storage>("/storage");
    // The oldest record in D1 is this test's first (older years are emptied by their tests).
    expect(seeded.oldest_record_in_d1).toBe(new Date(records[0]!.createdAt).toISOString());
    const rows = await env.DB.prepare("SELECT (SELECT count(*) FROM generations) AS g, (SELECT count(*) FROM endpoint_attempts) AS a").first<{
      g: number;
      a: number;
    }>();
    expect(seeded.generations_in_d1).toBe(rows!.g);
    expect(seeded.endpoint_attempts).toBe(rows!.a);
    expect(seeded.generations_in_d1).toBeGreaterThanOrEqual(80);

    await archiveRecords(env.DB, env.ARCHIVE, options(start + 40 * DAY));
    const s = await admin<Storage>("/storage");
    const index = await archiveIndex();
    let bytes = 0;
    for (const p of index.archived) bytes += (await env.ARCHIVE.head(p.key))!.size; // what R2 holds is what the index says
    expect(s).toMatchObject({
      archive_objects: index.archived.length,
      archive_bytes: bytes,
      archive_records: index.archived.reduce((n, p) => n + p.records, 0),
      archive_parts_writing: index.writing.length,
      d1_limit_bytes: 10_000_000_000,
      d1_warn_percent: 80,
      retention_days: 36_500, // vitest.config.ts: the Cron Trigger keeps every test's records
    });
    expect(index.archived.reduce((n, p) => n + p.bytes, 0)).toBe(bytes);
    expect(s.archive_objects).toBeGreaterThanOrEqual(10);
    // Days 0–9 left D1: the oldest record is now the first of day 10.
    expect(s.oldest_record_in_d1).toBe(new Date(records.find((r) => r.createdAt >= start + 10 * DAY)!.createdAt).toISOString());
    expect(s.generations_in_d1).toBe(seeded.generations_in_d1 - 20);
    expect(s.d1_size_bytes).toBeGreaterThan(0);
    expect(s.d1_percent).toBe(Math.round((s.d1_size_bytes! / 10_000_000_000) * 1000) / 10);

    // A tiny limit shows D1 past it.
    const tiny = await storageWithVars({ D1_SIZE_LIMIT_BYTES: "1000", D1_SIZE_WARN_PERCENT: "50", RECORDS_RETENTION_DAYS: "30" });
    expect(tiny).toMatchObject({ d1_limit_bytes: 1000, d1_warn_percent: 50, retention_days: 30 });
    expect(tiny.d1_percent).toBeGreaterThan(100);

    await archiveRecords(env.DB, env.ARCHIVE, options(start + 70 * DAY));
    expect((await indexRows(accountId)).reduce((n, p) => n + p.records, 0)).toBe(80);
  });

  it("each archive run logs `d1 size warning` while D1 is past D1_SIZE_WARN_PERCENT of D1_SIZE_LIMIT_BYTES, and not below it", async () => {
    const spy = vi.spyOn(console, "warn").mockImplementation(() => {});
    const now = year(2000); // a clock before every test's records: the run archives nothing
    const warnings = () => spy.mock.calls.filter((c) => c[0] === "d1 size warning");

    await archiveWith(env as Env, now);
    expect(warnings()).toEqual([]); // 10 GB by default

    const run = await archiveWith({ ...env, D1_SIZE_LIMIT_BYTES: "1000", D1_SIZE_WARN_PERCENT: "80" } as Env, now);
    expect(run).toEqual({ parts: 0, records: 0, notCommitted: 0, done: true });
    expect(warnings()).toHaveLength(1);
    const [, detail] = warnings()[0] as [string, { size_bytes: number; limit_bytes: number; percent: number }];
    expect(detail.limit_bytes).toBe(1000);
    expect(detail.size_bytes).toBeGreaterThan(1000);
    expect(detail.percent).toBe(Math.round((detail.size_bytes / 1000) * 1000) / 10);

    // The same size under the fraction of a larger limit: no line.
    await archiveWith({ ...env, D1_SIZE_LIMIT_BYTES: String(detail.size_bytes * 10), D1_SIZE_WARN_PERCENT: "80" } as Env, now);
    expect(warnings()).toHaveLength(1);

    // A run that fails (R2 refuses the write) still logs it: a stuck archive is when D1 fills.
    const start = year(2015);
    await seedDays("storage-fail-" + crypto.randomUUID(), start, 1, 2);
    const refusing = new Proxy(env.ARCHIVE, {
      get: (bucket, name) => (name === "put" ? () => Promise.reject(new Error("R2 is down")) : Reflect.get(bucket, name, bucket)),
    });
    const failing = { ...env, ARCHIVE: refusing, D1_SIZE_LIMIT_BYTES: "1000", RECORDS_RETENTION_DAYS: "30" } as Env;
    await expect(archiveWith(failing, start + 40 * DAY)).rejects.toThrow("R2 is down");
    expect(warnings()).toHaveLength(2);
    await archiveWith({ ...env, RECORDS_RETENTION_DAYS: "30" } as Env, start + 40 * DAY); // and the records leave once R2 works
  });
});
