import { getTableColumns } from "drizzle-orm";
import { generations, type Generation, type NewGeneration } from "../db/schema";
import { toHex } from "../keys/api-key";

/**
 * The archive's object format (docs/storage.md, "R2 bucket ARCHIVE"): gzip of NDJSON, one generation
 * record a line, its D1 columns by their D1 names (booleans as JSON booleans), oldest first by
 * (created_at, id). Pure functions, but for the Web streams that compress.
 */

const COLUMNS = Object.entries(getTableColumns(generations)).map(([key, column]) => [key as keyof Generation, column.name] as const);
const ID_COLUMN = generations.id.name;
if (COLUMNS[0]?.[1] !== ID_COLUMN) throw new Error("generations: the id must be the first column (recordInText finds a line by it)");

/** The object of one part: records/v1/<account>/<day>/<part, 4 digits>.ndjson.gz. */
export function partKey(accountId: string, day: string, part: number): string {
  return `records/v1/${accountId}/${day}/${String(part).padStart(4, "0")}.ndjson.gz`;
}

/**
 * The object of a ledger record batch's records of one UTC day (src/generations/store-batches.ts):
 * records/v2/<account>/<day>/<first>-<last>.ndjson.gz, named by the batch's outbox sequence numbers, so a
 * batch stored again writes the same object.
 */
export function batchPartKey(accountId: string, day: string, batch: string): string {
  return `records/v2/${accountId}/${day}/${batch.slice(batch.lastIndexOf(":") + 1)}.ndjson.gz`;
}

/** A record as the ledger settled it, with what D1 would have filled in: absent fields null, or their column's default. */
export function storedRecord(r: NewGeneration): Generation {
  const g: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(generations))) {
    const v = (r as Record<string, unknown>)[key];
    g[key] = v !== undefined && v !== null ? v : column.hasDefault && column.default !== undefined ? column.default : null;
  }
  return g as Generation;
}

/** The UTC day of a Unix ms, "YYYY-MM-DD". */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function recordLine(g: Generation): string {
  const o: Record<string, unknown> = {};
  for (const [key, name] of COLUMNS) o[name] = g[key] ?? null;
  return JSON.stringify(o);
}

export function lineRecord(line: string): Generation {
  const o = JSON.parse(line) as Record<string, unknown>;
  const g: Record<string, unknown> = {};
  for (const [key, name] of COLUMNS) g[key] = o[name] ?? null;
  return g as Generation;
}

/** NDJSON of the records, gzip-compressed. */
export async function packRecords(records: readonly Generation[]): Promise<Uint8Array> {
  const text = records.map((g) => recordLine(g) + "\n").join("");
  const gz = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(gz).arrayBuffer());
}

/** The NDJSON text of an object's bytes (or body). */
export function unpackText(body: ReadableStream<Uint8Array> | Uint8Array): Promise<string> {
  const stream = body instanceof Uint8Array ? new Blob([body]).stream() : body;
  return new Response(stream.pipeThrough(new DecompressionStream("gzip"))).text();
}

/** The records of an object's bytes (or body), in their order. */
export async function unpackRecords(body: ReadableStream<Uint8Array> | Uint8Array): Promise<Generation[]> {
  return (await unpackText(body))
    .split("\n")
    .filter((l) => l !== "")
    .map(lineRecord);
}

/**
 * The one record with this id in an object's NDJSON, parsing only its line: every line starts with the
 * id column (the table's first), so the id's opening text finds it.
 */
export function recordInText(text: string, id: string): Generation | undefined {
  const opening = `{"${ID_COLUMN}":${JSON.stringify(id)},`;
  const at = text.startsWith(opening) ? 0 : text.indexOf("\n" + opening);
  if (at < 0) return undefined;
  const start = at === 0 ? 0 : at + 1;
  const end = text.indexOf("\n", start);
  return lineRecord(text.slice(start, end < 0 ? undefined : end));
}

/** What an object of these records (oldest first) holds, as its index row says it: packed, with its count, size, checksum, time range and cost. */
export async function packPart(
  records: readonly Generation[],
): Promise<{ packed: Uint8Array; records: number; bytes: number; sha256: string; firstAt: number; lastAt: number; costNano: number }> {
  const packed = await packRecords(records);
  return {
    packed,
    records: records.length,
    bytes: packed.length,
    sha256: await sha256Bytes(packed),
    firstAt: records[0]!.createdAt,
    lastAt: records.at(-1)!.createdAt,
    costNano: records.reduce((s, r) => s + r.costNano, 0),
  };
}

export async function sha256Bytes(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}
