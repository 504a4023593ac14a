// The size of a local D1 database as SQLite counts it, read from its files (D1 refuses `PRAGMA
// page_count` and `freelist_count`): the load scripts (scripts/archive-load.ts, scripts/records-load.ts)
// measure D1 with it beside D1's own `size_after`.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** Bytes of the files under a directory (none: 0). */
export function diskBytes(dir: string, match: (name: string) => boolean = () => true): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const path = join(dir, name);
    const st = statSync(path);
    total += st.isDirectory() ? diskBytes(path, match) : match(name) ? st.size : 0;
  }
  return total;
}

/**
 * Page size, pages and free pages of a SQLite database as of its last commit, from its files: the header
 * of the main file, overridden by the write-ahead log's committed frames (the database size each commit
 * frame records, and the newest committed copy of page 1, whose header holds the free-page count).
 */
export function sqlitePages(path: string): { pageSize: number; pages: number; freePages: number; autoVacuum: boolean } {
  const main = readFileSync(path);
  const size = main.readUInt16BE(16);
  const pageSize = size === 1 ? 65_536 : size;
  let pages = main.readUInt32BE(28);
  let page1 = main.subarray(0, 100);
  if (existsSync(`${path}-wal`)) {
    const wal = readFileSync(`${path}-wal`);
    if (wal.length >= 32) {
      const framePage = wal.readUInt32BE(8);
      const salt = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
      let pending: typeof page1 | null = null;
      for (let at = 32; at + 24 + framePage <= wal.length; at += 24 + framePage) {
        if (wal.readUInt32BE(at + 8) !== salt[0] || wal.readUInt32BE(at + 12) !== salt[1]) break; // a frame of an earlier log
        if (wal.readUInt32BE(at) === 1) pending = wal.subarray(at + 24, at + 124);
        const committed = wal.readUInt32BE(at + 4); // non-zero on a commit's last frame: the database's pages then
        if (committed !== 0) {
          pages = committed;
          if (pending) page1 = pending;
        }
      }
    }
  }
  return { pageSize, pages, freePages: page1.readUInt32BE(36), autoVacuum: page1.readUInt32BE(52) !== 0 };
}

/** The local D1 database's file (Miniflare keeps one SQLite file per database beside a metadata file). */
export function d1File(state: string): string | null {
  const dir = join(state, "d1", "miniflare-D1DatabaseObject");
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite") : [];
  return files.length === 1 ? join(dir, files[0]!) : null;
}
