import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { archiveRecords, retentionCutoff, type ArchiveOptions, type ArchiveStep } from "../../src/generations/archive-records";
import { flushGenerations } from "../../src/db/generations";
import { COMMIT_SQL } from "../../src/db/archive-index";
import { DAY, archivedRecords, d1Ids, indexRows, seedDays } from "./archive-helpers";

// Each test seeds its own account in its own year, long before any other test's records: the archive takes
// the oldest records past retention over all accounts, so a test's clock reaches only its own (and older) years.
const year = (y: number) => Date.UTC(y, 0, 1);
const options = (now: number, over: Partial<ArchiveOptions> = {}): ArchiveOptions => ({
  now,
  retentionDays: 30,
  partRecords: 10_000,
  partsPerRun: 1_000,
  runMs: 600_000,
  concurrency: 4,
  ...over,
});
const sum = (xs: readonly { costNano: number }[]) => xs.reduce((s, x) => s + x.costNano, 0);

describe("records archive (D1 → R2)", () => {
  it("moves records older than the retention to one verified object per account-day, keeps the rest, and a re-run does nothing", async () => {
    const account = "arch-keep-" + crypto.randomUUID();
    const start = year(2001);
    const legacyId = "gen-" + "ab".repeat(12);
    const records = await seedDays(account, start, 40, 5, (i) => (i === 0 ? { id: legacyId } : {}));
    const now = start + 40 * DAY + 12 * 3_600_000; // day 40, noon: day 10 is the first kept (30 days before today)
    expect(retentionCutoff(now, 30)).toBe(start + 10 * DAY);

    const run = await archiveRecords(env.DB, env.ARCHIVE, options(now));
    expect(run).toMatchObject({ done: true, notCommitted: 0 });

    const old = records.filter((r) => r.createdAt < start + 10 * DAY);
    const kept = records.filter((r) => r.createdAt >= start + 10 * DAY);
    expect(await d1Ids(account)).toEqual(kept.map((r) => r.id).sort());
    const archived = await archivedRecords(account);
    expect(archived.map((r) => r.id).sort()).toEqual(old.map((r) => r.id).sort());
    // Every field survives the trip, the revision included.
    const first = archived.find((r) => r.id === legacyId)!;
    const { object: _o, ...fields } = first;
    expect(fields).toEqual({ ...records[0], rev: 0 });

    const index = await indexRows(account);
    expect(index).toHaveLength(10);
    expect(index.every((p) => p.state === "archived" && p.records === 5 && p.part === 0)).toBe(true);
    expect(index.map((p) => p.day)).toEqual(Array.from({ length: 10 }, (_, d) => new Date(start + d * DAY).toISOString().slice(0, 10)));
    expect(index.reduce((s, p) => s + p.cost_nano, 0)).toBe(sum(old));
    const rollups = await env.DB.prepare("SELECT sum(requests) AS requests, sum(cost_nano) AS cost FROM archive_rollups WHERE account_id = ?")
      .bind(account)
      .first<{ requests: number; cost: number }>();
    expect(rollups).toEqual({ requests: old.length, cost: sum(old) });
    const legacy = await env.DB.prepare("SELECT day, part FROM archived_legacy_ids WHERE id = ?").bind(legacyId).first();
    expect(legacy).toEqual({ day: "2001-01-01", part: 0 });

    expect(await archiveRecords(env.DB, env.ARCHIVE, options(now))).toEqual({ parts: 0, records: 0, notCommitted: 0, done: true });
    expect((await archivedRecords(account)).length).toBe(old.length);

    // Thirty days later the rest follows (and the next tests start from an empty past).
    await archiveRecords(env.DB, env.ARCHIVE, options(now + 30 * DAY));
    expect(await d1Ids(account)).toEqual([]);
    expect((await archivedRecords(account)).length).toBe(records.length);
  });

  it("writes a large day as several parts in order, a bounded number a run", async () => {
    const account = "arch-parts-" + crypto.randomUUID();
    const start = year(2002);
    const records = await seedDays(account, start, 2, 5);
    const now = start + 40 * DAY;
    const first = await archiveRecords(env.DB, env.ARCHIVE, options(now, { partRecords: 2, partsPerRun: 4, concurrency: 1 }));
    expect(first).toMatchObject({ parts: 4, records: 7, done: false });
    // A run whose time is spent starts no part (RECORDS_ARCHIVE_RUN_MS); the records wait for the next.
    expect(await archiveRecords(env.DB, env.ARCHIVE, options(now, { runMs: 0 }))).toEqual({ parts: 0, records: 0, notCommitted: 0, done: false });
    const second = await archiveRecords(env.DB, env.ARCHIVE, options(now, { partRecords: 2, partsPerRun: 4, concurrency: 1 }));
    expect(second).toMatchObject({ parts: 2, records: 3, done: true });
    const index = await indexRows(account);
    expect(index.map((p) => [p.day, p.part, p.records])).toEqual([
      ["2002-01-01", 0, 2],
      ["2002-01-01", 1, 2],
      ["2002-01-01", 2, 1],
      ["2002-01-02", 0, 2],
      ["2002-01-02", 1, 2],
      ["2002-01-02", 2, 1],
    ]);
    const archived = await archivedRecords(account);
    expect(archived.map((r) => r.id)).toEqual(records.map((r) => r.id)); // objects listed in key order hold the records in time order
    expect(await d1Ids(account)).toEqual([]);
  });

  const steps: ArchiveStep[] = ["marked", "written", "verified", "committed"];
  for (const [i, step] of steps.entries()) {
    it(`a crash after the step "${step}" loses nothing and duplicates nothing; the next run finishes`, async () => {
      const account = `arch-crash-${step}-` + crypto.randomUUID();
      const start = year(2003 + i);
      const records = await seedDays(account, start, 2, 3);
      const now = start + 40 * DAY;
      let crashed = 0;
      const crash = async (at: ArchiveStep) => {
        if (at === step && crashed++ === 0) throw new Error(`crash after ${step}`);
      };
      await expect(archiveRecords(env.DB, env.ARCHIVE, options(now, { partRecords: 2, afterStep: crash }))).rejects.toThrow(`crash after ${step}`);

      // At the crash: every record is in D1 or in an archived part, never both, never neither.
      const archivedParts = new Set((await indexRows(account)).filter((p) => p.state === "archived").map((p) => p.key));
      const inArchive = (await archivedRecords(account)).filter((r) => archivedParts.has(r.object)).map((r) => r.id);
      const inD1 = await d1Ids(account);
      expect([...inArchive, ...inD1].sort()).toEqual(records.map((r) => r.id).sort());

      const run = await archiveRecords(env.DB, env.ARCHIVE, options(now, { partRecords: 2 }));
      expect(run.done).toBe(true);
      const archived = await archivedRecords(account);
      expect(archived.map((r) => r.id)).toEqual(records.map((r) => r.id));
      expect(await d1Ids(account)).toEqual([]);
      const index = await indexRows(account);
      expect(index.every((p) => p.state === "archived")).toBe(true);
      expect(index.reduce((s, p) => s + p.records, 0)).toBe(records.length);
      const rollups = await env.DB.prepare("SELECT sum(requests) AS requests, sum(cost_nano) AS cost FROM archive_rollups WHERE account_id = ?")
        .bind(account)
        .first();
      expect(rollups).toEqual({ requests: records.length, cost: sum(records) });
    });
  }

  it("a record replaced while its part is written stays in D1 and is archived as it now is", async () => {
    const account = "arch-changed-" + crypto.randomUUID();
    const start = year(2008);
    const records = await seedDays(account, start, 1, 3);
    const now = start + 40 * DAY;
    const late = { ...records[1]!, costNano: 999_999, status: 200, finishReason: "length" };
    let replaced = false;
    const run = await archiveRecords(env.DB, env.ARCHIVE, {
      ...options(now, { partsPerRun: 1 }),
      afterStep: async (step) => {
        if (step === "verified" && !replaced) {
          replaced = true;
          await flushGenerations(env.DB, [JSON.stringify(late)]); // a late settle replaces the record (rev 0 → 1)
        }
      },
    });
    expect(run).toMatchObject({ parts: 0, notCommitted: 1 });
    expect(await d1Ids(account)).toEqual(records.map((r) => r.id).sort());
    expect((await indexRows(account)).map((p) => p.state)).toEqual(["writing"]);

    expect(await archiveRecords(env.DB, env.ARCHIVE, options(now))).toMatchObject({ parts: 1, done: true });
    const archived = await archivedRecords(account);
    expect(archived.map((r) => [r.id, r.costNano, r.rev])).toEqual([
      [records[0]!.id, records[0]!.costNano, 0],
      [late.id, 999_999, 1],
      [records[2]!.id, records[2]!.costNano, 0],
    ]);
    expect((await indexRows(account)).map((p) => [p.part, p.state, p.cost_nano])).toEqual([
      [0, "archived", records[0]!.costNano + 999_999 + records[2]!.costNano],
    ]);
  });

  it("two runs at once archive each record once", async () => {
    const account = "arch-race-" + crypto.randomUUID();
    const start = year(2009);
    const records = await seedDays(account, start, 3, 4);
    const now = start + 40 * DAY;
    await Promise.all([
      archiveRecords(env.DB, env.ARCHIVE, options(now, { partRecords: 3 })),
      archiveRecords(env.DB, env.ARCHIVE, options(now, { partRecords: 3 })),
    ]);
    await archiveRecords(env.DB, env.ARCHIVE, options(now, { partRecords: 3 })); // whatever a lost race left
    const archived = await archivedRecords(account);
    expect(archived.map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(await d1Ids(account)).toEqual([]);
    const rollups = await env.DB.prepare("SELECT sum(requests) AS requests FROM archive_rollups WHERE account_id = ?").bind(account).first();
    expect(rollups).toEqual({ requests: records.length });
  });
});

describe("records archive statements", () => {
  it("find the part's records by primary key, never by walking the account's records", async () => {
    for (const q of COMMIT_SQL) {
      const used = Math.max(...[...q.matchAll(/\?(\d+)/g)].map((m) => Number(m[1])));
      const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q}`)
        .bind(...["acct", "2001-01-01", 0, "[]", "[]", "c", 1, "s", 1].slice(0, used))
        .all<{ detail: string }>();
      const details = results.map((r) => r.detail).join("\n");
      expect(details, q).not.toMatch(/generations USING (COVERING )?INDEX generations_account_created/);
      if (/FROM generations WHERE/.test(q)) expect(details, q).toMatch(/SEARCH generations USING INDEX sqlite_autoindex_generations_1 \(id=\?\)/);
    }
  });
});
