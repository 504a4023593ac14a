import { and, eq, getTableColumns, getTableName, sql, type AnyColumn } from "drizzle-orm";
import { db } from "./client";
import { generations, type Generation } from "./schema";
import { DELETE_ATTEMPTS_SQL, INSERT_ATTEMPTS_SQL } from "./endpoint-attempts";

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
 * Writes settled generation records, given as the JSON of `NewGeneration` objects, and their carrier
 * attempts (`providerResponses`) into `endpoint_attempts`, in one D1 batch (one transaction). A record
 * replaces one with the same id, attempts included, so a retried flush is harmless and a late settle
 * replaces the "abandoned" record the ledger wrote when its hold expired.
 */
export async function flushGenerations(d1: D1Database, records: string[]): Promise<void> {
  if (records.length === 0) return;
  const statements = [FLUSH_SQL, DELETE_ATTEMPTS_SQL, INSERT_ATTEMPTS_SQL].map((q) => d1.prepare(q));
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
  await d1.batch(chunks.flatMap((json) => statements.map((s) => s.bind(json))));
}

/** One of the account's generations, or undefined; never another account's. */
export async function findGeneration(d1: D1Database, accountId: string, id: string): Promise<Generation | undefined> {
  return db(d1)
    .select()
    .from(generations)
    .where(and(eq(generations.id, id), eq(generations.accountId, accountId)))
    .get();
}
