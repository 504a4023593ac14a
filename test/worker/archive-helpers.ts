import { env } from "cloudflare:test";
import { flushGenerations } from "../../src/db/generations";
import type { Generation, NewGeneration } from "../../src/db/schema";
import { syntheticRecord } from "./synthetic-record";
import { unpackRecords } from "../../src/generations/archive-format";

export const DAY = 86_400_000;
export { syntheticRecord };

/** `perDay` records a day for `days` UTC days from `start` (a day's start), hours apart; flushed to D1. */
export async function seedDays(
  accountId: string,
  start: number,
  days: number,
  perDay: number,
  over: (i: number) => Partial<NewGeneration> = () => ({}),
): Promise<NewGeneration[]> {
  const records: NewGeneration[] = [];
  for (let d = 0; d < days; d++)
    for (let k = 0; k < perDay; k++) records.push(syntheticRecord(accountId, start + d * DAY + 3_600_000 * (k + 1), records.length, over(records.length)));
  await flushGenerations(
    env.DB,
    records.map((r) => JSON.stringify(r)),
  );
  return records;
}

/** Every record in the account's archive objects (listing the bucket: tests only), with the object each is in. */
export async function archivedRecords(accountId: string): Promise<Array<Generation & { object: string }>> {
  const out: Array<Generation & { object: string }> = [];
  let cursor: string | undefined;
  do {
    const listed = await env.ARCHIVE.list({ prefix: `records/v1/${accountId}/`, cursor });
    for (const o of listed.objects) {
      const body = await env.ARCHIVE.get(o.key);
      for (const g of await unpackRecords(new Uint8Array(await body!.arrayBuffer()))) out.push({ ...g, object: o.key });
    }
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  return out;
}

export async function d1Ids(accountId: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT id FROM generations WHERE account_id = ? ORDER BY id").bind(accountId).all<{ id: string }>();
  return results.map((r) => r.id);
}

export async function indexRows(
  accountId: string,
): Promise<Array<{ day: string; part: number; state: string; records: number; key: string; cost_nano: number }>> {
  const { results } = await env.DB.prepare("SELECT day, part, state, records, key, cost_nano FROM archive_parts WHERE account_id = ? ORDER BY day, part")
    .bind(accountId)
    .all<{ day: string; part: number; state: string; records: number; key: string; cost_nano: number }>();
  return results;
}
