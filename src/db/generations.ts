import { and, eq, getTableColumns, getTableName, sql, type AnyColumn } from "drizzle-orm";
import { db } from "./client";
import { generations, type Generation } from "./schema";
import { attemptRollupStatements, type RollupGuard } from "./endpoint-minutes";

// The ledger flushes records in batches of hundreds, as the JSON it stored them in: one statement per
// few hundred rows, which SQLite unpacks with json_each (no parsing or binding per record in JS, one
// statement instead of one per row). Column names come from the drizzle table, the single source.
const COLUMNS = Object.entries(getTableColumns(generations)).map(([key, column]) => ({ key, column }));
const FLUSH_SQL =
  `INSERT INTO "${getTableName(generations)}" (${COLUMNS.map(({ column }) => `"${column.name}"`).join(", ")}) ` +
  `SELECT ${COLUMNS.map(({ column, key }) => fieldOf(column, key)).join(", ")} FROM json_each(?) WHERE true ` + // WHERE: SQLite's upsert-after-SELECT rule
  `ON CONFLICT ("${generations.id.name}") DO UPDATE SET ${COLUMNS.filter(({ column }) => column !== generations.id && column !== generations.rev)
    .map(({ column }) => `"${column.name}" = excluded."${column.name}"`)
    .concat(`"${generations.rev.name}" = "${getTableName(generations)}"."${generations.rev.name}" + 1`)
    .join(", ")}`;
/** JSON characters per statement: at most 1.5 MB as UTF-8, inside D1's 2 MB value limit. */
const FLUSH_CHUNK_CHARS = 512 * 1024;

/** The record field as the column stores it: booleans become 0/1 (json_extract does that), defaults fill gaps. */
function fieldOf(column: AnyColumn, key: string): string {
  const field = `json_extract(value, '$.${key}')`;
  if (!column.hasDefault || column.default === undefined) return field;
  const fallback = column.mapToDriverValue(column.default);
  return `COALESCE(${field}, ${typeof fallback === "string" ? `'${fallback.replaceAll("'", "''")}'` : Number(fallback)})`;
}

/**
 * A record's attempts count toward endpoint health once: unless a record with its id is already in D1
 * carrying attempts. A retried flush (its first try committed unseen) finds its rows there and counts
 * nothing again; a late settle replacing the "abandoned" record an expired hold left counts, as that
 * record was made at admission, before any carrier was tried, and carries none.
 */
const NOT_YET_COUNTED: RollupGuard = {
  sql: `NOT EXISTS (SELECT 1 FROM "${getTableName(generations)}" AS g WHERE g."${generations.id.name}" = rec.id AND json_valid(g."${generations.providerResponses.name}") AND json_array_length(g."${generations.providerResponses.name}") > 0)`,
  params: [],
};

/**
 * Writes settled generation records, given as the JSON of `NewGeneration` objects, and adds their
 * carrier attempts (`providerResponses`) to endpoint health's minute rollups, in one D1 batch (one
 * transaction): per chunk, the rollups first (their guard reads the generations rows as they were),
 * then the records. A record replaces one with the same id, so a retried flush is harmless and a late
 * settle replaces the "abandoned" record the ledger wrote when its hold expired.
 */
export async function flushGenerations(d1: D1Database, records: string[]): Promise<void> {
  if (records.length === 0) return;
  const flush = d1.prepare(FLUSH_SQL);
  const chunks: string[] = [];
  let chunk: string[] = [];
  let chars = 0;
  for (const r of records) {
    if (chunk.length > 0 && chars + r.length > FLUSH_CHUNK_CHARS) {
      chunks.push(`[${chunk.join(",")}]`);
      chunk = [];
      chars = 0;
    }
    chunk.push(r);
    chars += r.length + 1;
  }
  chunks.push(`[${chunk.join(",")}]`);
  await d1.batch(chunks.flatMap((json) => [...attemptRollupStatements(d1, json, NOT_YET_COUNTED), flush.bind(json)]));
}

/** One of the account's generations, or undefined; never another account's. */
export async function findGeneration(d1: D1Database, accountId: string, id: string): Promise<Generation | undefined> {
  return db(d1)
    .select()
    .from(generations)
    .where(and(eq(generations.id, id), eq(generations.accountId, accountId)))
    .get();
}
