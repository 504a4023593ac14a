import { and, eq, gte, lt, lte, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { apiKeys, archiveRollups, generations, recordRollups, type Generation } from "./schema";

/** A UTC day, ms. */
export const DAY_MS = 86_400_000;

/** What a listing of an account's records is narrowed to (all optional): UTC days from–to (inclusive, "YYYY-MM-DD"), a key hash, a model. */
export type RecordFilter = { from?: string; to?: string; key?: string; model?: string; member?: MemberKeys };

/**
 * Only the records of one member's keys (a member's role sees only those: docs/teams.md): in D1 by a subquery on
 * `api_keys.member_id`, in the archive by the set of their key hashes (read with it). Keys since deleted drop out.
 */
export type MemberKeys = { memberId: string; hashes: ReadonlySet<string> };

const ofMember = (column: SQLWrapper, m: MemberKeys | undefined): SQL[] =>
  m ? [sql`${column} IN (SELECT ${apiKeys.hash} FROM ${apiKeys} WHERE ${apiKeys.memberId} = ${m.memberId})`] : [];

/** The account's records in D1 within the filter. */
export function recordWhere(accountId: string, f: RecordFilter): SQL {
  const parts: SQL[] = [eq(generations.accountId, accountId)];
  if (f.from) parts.push(gte(generations.createdAt, Date.parse(f.from)));
  if (f.to) parts.push(lt(generations.createdAt, Date.parse(f.to) + DAY_MS));
  if (f.key) parts.push(eq(generations.keyHash, f.key));
  if (f.model) parts.push(eq(generations.model, f.model));
  parts.push(...ofMember(generations.keyHash, f.member));
  return and(...parts)!;
}

/** The account's archived rollups within the filter (archived parts lie within one UTC day, so days filter them exactly). */
export function rollupWhere(accountId: string, f: RecordFilter): SQL {
  const parts: SQL[] = [eq(archiveRollups.accountId, accountId)];
  if (f.from) parts.push(gte(archiveRollups.day, f.from));
  if (f.to) parts.push(lte(archiveRollups.day, f.to));
  if (f.key) parts.push(eq(archiveRollups.keyHash, f.key));
  if (f.model) parts.push(eq(archiveRollups.model, f.model));
  parts.push(...ofMember(archiveRollups.keyHash, f.member));
  return and(...parts)!;
}

/** The account's hourly rollups (the records queue's) within the filter: an hour lies within one UTC day, so days filter them exactly. */
export function hourlyWhere(accountId: string, f: RecordFilter): SQL {
  const parts: SQL[] = [eq(recordRollups.accountId, accountId)];
  if (f.from) parts.push(gte(recordRollups.hour, Date.parse(f.from)));
  if (f.to) parts.push(lt(recordRollups.hour, Date.parse(f.to) + DAY_MS));
  if (f.key) parts.push(eq(recordRollups.keyHash, f.key));
  if (f.model) parts.push(eq(recordRollups.model, f.model));
  parts.push(...ofMember(recordRollups.keyHash, f.member));
  return and(...parts)!;
}

/** The same filter on a record read from the archive. */
export function matchesFilter(g: Generation, f: RecordFilter): boolean {
  return (
    (!f.from || g.createdAt >= Date.parse(f.from)) &&
    (!f.to || g.createdAt < Date.parse(f.to) + DAY_MS) &&
    (!f.key || g.keyHash === f.key) &&
    (!f.model || g.model === f.model) &&
    (!f.member || f.member.hashes.has(g.keyHash))
  );
}
