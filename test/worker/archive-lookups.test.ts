import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { archiveRecords, type ArchiveOptions } from "../../src/generations/archive-records";
import { recordsPage } from "../../src/generations/record-pages";
import { breakdowns, spendSeries } from "../../src/console/activity/queries";
import { sha256Hex } from "../../src/keys/sha256";
import { admin, chat, get, newAccount, settled, storedRecords, user } from "./helpers";
import { createKeyViaConsole, signUp, type ConsoleClient } from "./console-helpers";
import { DAY, archivedRecords, d1Ids, seedDays } from "./archive-helpers";

// Years 2021–2030 are this file's (records-archive.test.ts explains why each test has its own years).
const year = (y: number) => Date.UTC(y, 0, 1);
const archiveAt = (now: number, over: Partial<ArchiveOptions> = {}) =>
  archiveRecords(env.DB, env.ARCHIVE, { now, retentionDays: 30, partRecords: 10_000, partsPerRun: 1_000, runMs: 600_000, concurrency: 4, ...over });
const stores = (readsPerPage = 8) => ({ d1: env.DB, bucket: env.ARCHIVE, readsPerPage });

const idsOf = (html: string) => [...html.matchAll(/<tr id="(gen-[^"]+)">/g)].map((m) => m[1]!);
const link = (html: string, label: string) => {
  const m = new RegExp(`<a href="([^"]+)">${label}</a>`).exec(html);
  return m ? m[1]!.replaceAll("&amp;", "&") : undefined;
};

/** Every id the console lists, following "Older →" from the first page, then "← Newer" back. */
async function walk(client: ConsoleClient, first: string): Promise<{ down: string[]; up: string[] }> {
  const down: string[] = [];
  const pages: string[][] = [];
  let path: string | undefined = first;
  for (let n = 0; path && n < 50; n++) {
    const { status, html } = await client.page(path);
    expect(status).toBe(200);
    pages.push(idsOf(html));
    down.push(...idsOf(html));
    const older = link(html, "Older →");
    if (!older) {
      // And back up from the last page.
      const up: string[] = [];
      let back = link(html, "← Newer");
      for (let m = 0; back && m < 50; m++) {
        const page = await client.page(back);
        up.unshift(...idsOf(page.html));
        back = link(page.html, "← Newer");
      }
      up.push(...pages.at(-1)!);
      return { down, up };
    }
    path = older;
  }
  throw new Error("too many pages");
}

describe("records across D1 and the archive", () => {
  it("GET /generation finds archived records by time-sortable and older ids, and never another account's", async () => {
    const a = await newAccount(1);
    const b = await newAccount(1);
    const start = year(2021);
    const legacy = "gen-" + "cd".repeat(12);
    const records = await seedDays(a.accountId, start, 3, 2, (i) => ({ keyHash: a.hash, ...(i === 1 ? { id: legacy } : {}) }));
    await archiveAt(start + 40 * DAY);
    expect(await d1Ids(a.accountId)).toEqual([]);

    for (const r of [records[0]!, records[1]!, records[5]!]) {
      const res = await get(`/generation?id=${r.id}`, a.key);
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: Record<string, unknown> };
      expect(data).toMatchObject({
        id: r.id,
        model: r.model,
        total_cost: r.costNano / 1e9,
        tokens_prompt: r.tokensPrompt,
        created_at: new Date(r.createdAt).toISOString(),
      });
    }
    expect((await get(`/generation?id=${records[0]!.id}`, b.key)).status).toBe(404);
    expect((await get(`/generation?id=${legacy}`, b.key)).status).toBe(404);
    // A time-shaped id that was never made: nothing read beyond the index, 404.
    expect((await get(`/generation?id=gen-${start.toString(16).padStart(12, "0")}${"0".repeat(20)}`, a.key)).status).toBe(404);
  });

  it("the console pages, sums and exports across the boundary: every record once, in order, each way", async () => {
    const { client, accountId } = await signUp();
    const { key } = await createKeyViaConsole(client, "archive");
    const keyHash = sha256Hex(key);
    const start = year(2022);
    // 40 days of 4 records; days 0–9 archived (one part a day): 40 archived, 120 in D1.
    const records = await seedDays(accountId, start, 40, 4, (i) => ({ keyHash: i % 3 ? keyHash : "e".repeat(64) }));
    await archiveAt(start + 40 * DAY);
    expect((await archivedRecords(accountId)).length).toBe(40);
    expect((await d1Ids(accountId)).length).toBe(120);

    const newestFirst = [...records].sort((x, y) => y.createdAt - x.createdAt || (x.id < y.id ? 1 : -1)).map((r) => r.id);
    const { down, up } = await walk(client, "/activity");
    expect(down).toEqual(newestFirst);
    expect(up).toEqual(newestFirst);

    // Filtered by key and by days: only the matching records, still across the boundary.
    const day = (d: number) => new Date(start + d * DAY).toISOString().slice(0, 10);
    const filtered = await walk(client, `/activity?key=${keyHash}&from=${day(5)}&to=${day(14)}`);
    const expected = newestFirst.filter((id) => {
      const r = records.find((x) => x.id === id)!;
      return r.keyHash === keyHash && r.createdAt >= start + 5 * DAY && r.createdAt < start + 15 * DAY;
    });
    expect(filtered.down).toEqual(expected);

    // The CSV: every record once, oldest first.
    const csv = await client.page("/activity.csv");
    expect(csv.status).toBe(200);
    const lines = csv.html.trim().split("\r\n");
    expect(lines.slice(1).map((l) => JSON.parse(l.split(",")[1]!) as string)).toEqual([...newestFirst].reverse());

    // Another account sees none of it, archived or not.
    const other = await signUp();
    expect(idsOf((await other.client.page("/activity")).html)).toEqual([]);
    expect((await other.client.page("/activity.csv")).html.trim().split("\r\n")).toHaveLength(1);
    expect((await breakdowns(env.DB, other.accountId, {})).model.total.requests).toBe(0);

    // Breakdowns and the day chart add the archive's rollups to D1's sums.
    const total = records.reduce((s, r) => s + r.costNano, 0);
    const sums = await breakdowns(env.DB, accountId, {});
    expect(sums.model.total).toMatchObject({ requests: 160, costNano: total });
    expect(sums.key.total.costNano).toBe(total);
    expect(sums.carrier.total.costNano).toBe(total);
    const inRange = records.filter((r) => r.createdAt >= start + 5 * DAY && r.createdAt < start + 15 * DAY);
    expect((await breakdowns(env.DB, accountId, { from: day(5), to: day(14) })).model.total.costNano).toBe(inRange.reduce((s, r) => s + r.costNano, 0));
    const series = await spendSeries(env.DB, accountId, "day", start + 39 * DAY + 1000);
    expect(series.map((p) => p.requests)).toEqual(Array.from({ length: 30 }, () => 4)); // days 10–39
    const older = await spendSeries(env.DB, accountId, "day", start + 20 * DAY + 1000);
    expect(older.slice(-21).map((p) => p.requests)).toEqual(Array.from({ length: 21 }, () => 4)); // days 0–20, the first ten archived
    expect(older.slice(-21).reduce((s, p) => s + p.costNano, 0)).toBe(
      records.filter((r) => r.createdAt < start + 21 * DAY).reduce((s, r) => s + r.costNano, 0),
    );
  });

  it("a page that would read more parts than allowed ends early with a link on, and skips or repeats nothing", async () => {
    const accountId = "arch-reads-" + crypto.randomUUID();
    const start = year(2023);
    const records = await seedDays(accountId, start, 12, 3);
    await archiveAt(start + 41 * DAY); // all twelve days, a part each
    const seen: string[] = [];
    let bound: { at: number; id: string } | null = null;
    let pages = 0;
    for (;;) {
      const page = await recordsPage(stores(2), accountId, {}, "newer", bound, 10);
      pages++;
      expect(page.rows.length).toBeGreaterThan(0);
      expect(page.rows.length).toBeLessThanOrEqual(10);
      seen.push(...page.rows.map((r) => r.id));
      const last = page.rows.at(-1)!;
      bound = { at: last.createdAt, id: last.id };
      if (!page.more) break;
      if (pages > 40) throw new Error("no progress");
    }
    expect(seen).toEqual(records.map((r) => r.id));
    expect(pages).toBeGreaterThanOrEqual(6); // 2 parts (6 records) a page at most
  });

  it("the sums of a range equal the ledger's usage: records stored through the records queue, none in D1", async () => {
    const { accountId, key } = await newAccount(5);
    for (let i = 0; i < 6; i++) expect((await chat(key, { model: "openai/gpt-oss-20b", ...user(`archive me ${i}`) })).status).toBe(200);
    const totals = await settled(accountId);
    expect(await storedRecords(accountId, 6)).toHaveLength(6);
    expect(await d1Ids(accountId)).toEqual([]);
    const [from, to] = [Date.now() - DAY, Date.now()].map((t) => new Date(t).toISOString().slice(0, 10)); // made within the last day
    const usageNano = Math.round(totals.total_usage * 1e9);
    const range = await breakdowns(env.DB, accountId, { from: from!, to: to! });
    expect(range.model.total).toMatchObject({ requests: 6, costNano: usageNano });
    const audit = await admin<{ usage_nano: number }>(`/accounts/${accountId}/audit`);
    expect(range.model.total.costNano).toBe(audit.usage_nano);
  });
});
