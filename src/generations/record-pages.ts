import type { Env } from "../env";
import type { Settings } from "../settings";
import { archivedParts, d1Records, type Cursor, type Direction } from "../db/record-queries";
import { matchesFilter, type RecordFilter } from "../db/record-filter";
import type { Generation } from "../db/schema";
import { readPart, type PartCache } from "./archive-read";

/** Where an account's records are: D1, and the archive (its index in D1, its objects in R2). */
export type RecordStores = { d1: D1Database; bucket: R2Bucket; readsPerPage: number };
export type RecordsPage = { rows: Generation[]; more: boolean };

const before = (a: Cursor, b: Cursor) => a.at < b.at || (a.at === b.at && a.id < b.id);
const cursorOf = (g: Generation): Cursor => ({ at: g.createdAt, id: g.id });

/**
 * Up to `limit` of the account's records within the filter, past `bound` in the direction (newest first
 * for "older", oldest first for "newer"), from D1 and the archive merged, and whether more lie beyond.
 * Archived parts are read in the order the listing meets them, until the page is full and the next part
 * lies wholly beyond its last row, or `readsPerPage` parts were read: then the page ends where the unread
 * parts could begin (shorter, with `more`), so no row is ever skipped or shown twice.
 */
export async function recordsPage(
  s: RecordStores,
  accountId: string,
  filter: RecordFilter,
  dir: Direction,
  bound: Cursor | null,
  limit: number,
  cache: PartCache = new Map(),
): Promise<RecordsPage> {
  const beyond = dir === "older" ? (a: Cursor, b: Cursor) => before(a, b) : (a: Cursor, b: Cursor) => before(b, a);
  const order = (a: Generation, b: Generation) => (beyond(cursorOf(a), cursorOf(b)) ? 1 : beyond(cursorOf(b), cursorOf(a)) ? -1 : 0);
  const [live, parts] = await Promise.all([
    d1Records(s.d1, accountId, filter, dir, bound, limit + 1),
    archivedParts(s.d1, accountId, filter, dir, bound, s.readsPerPage + 1),
  ]);
  const rows = new Map(live.map((g) => [g.id, g])); // D1 wins over the archive (a record changed after its day was archived)
  // Of two stored versions (a late settle's record replacing an abandoned one), the higher revision wins.
  const version = new Map<string, number>(live.map((g) => [g.id, Infinity]));
  let edge: number | undefined; // where unread parts could begin (createdAt), when the reads ran out
  for (const [i, p] of parts.entries()) {
    const kth = [...rows.values()].sort(order)[limit];
    const wholly = dir === "older" ? (kth ? p.lastAt < kth.createdAt : false) : kth ? p.firstAt > kth.createdAt : false;
    if (wholly) break;
    if (i === s.readsPerPage) {
      edge = dir === "older" ? p.lastAt : p.firstAt;
      break;
    }
    for (const g of await readPart(s.bucket, p.key, cache))
      if (g.accountId === accountId && matchesFilter(g, filter) && (!bound || beyond(cursorOf(g), bound)) && (version.get(g.id) ?? -Infinity) < g.rev) {
        rows.set(g.id, g);
        version.set(g.id, g.rev);
      }
  }
  let merged = [...rows.values()].sort(order);
  if (edge !== undefined) {
    const e = edge;
    const kept = merged.filter((g) => (dir === "older" ? g.createdAt > e : g.createdAt < e));
    // Never an empty page with `more`: read on past the bound on reads (rare: no row read lies before the edge).
    if (kept.length === 0) return recordsPage({ ...s, readsPerPage: s.readsPerPage * 2 }, accountId, filter, dir, bound, limit, cache);
    merged = kept;
    return { rows: merged.slice(0, limit), more: true };
  }
  return { rows: merged.slice(0, limit), more: merged.length > limit };
}

/** The Worker's record stores, with its settings. */
export function recordStores(env: Env, s: Pick<Settings, "RECORDS_ARCHIVE_READS_PER_PAGE">): RecordStores {
  return { d1: env.DB, bucket: env.ARCHIVE, readsPerPage: s.RECORDS_ARCHIVE_READS_PER_PAGE };
}
