import type { LedgerTimings } from "../ledger-config";
import type { RecordsOutbox } from "../records-outbox";

/** Bound parameters per SQL statement (SQLite in Durable Objects allows 100). */
export const MAX_BOUND_PARAMS = 100;
/** Settled debit ids, ended-slice audit rows and free-request day counts are kept this long. */
export const RETENTION_MS = 7 * 24 * 3600_000;

/**
 * What every module of the ledger Durable Object works on: the account's SQLite database and the object's
 * settings, read once when it starts. The modules are functions over it, not over the object, so each can
 * be tested on its own (test/worker/ledger-*.test.ts); the object (ledger-object.ts) builds one and delegates.
 */
export type LedgerDb = {
  readonly sql: SqlStorage;
  /** Runs `fn` in one transaction (all its writes or none). */
  transaction(fn: () => void): void;
  /** The time (ms epoch): the wall clock; tests replace it to play minutes in milliseconds. */
  now(): number;
  readonly timings: LedgerTimings;
  /** Generation records waiting for the records store. */
  readonly outbox: RecordsOutbox;
  /** Makes the object's alarm fire no later than `inMs` from now (alarm.ts). */
  scheduleAlarm(inMs: number): void;
};

/** The single number a query answers (its column `v`). */
export function one(sql: SqlStorage, query: string, ...bindings: unknown[]): number {
  return sql.exec<{ v: number }>(query, ...bindings).one().v;
}

/**
 * Runs a statement over many rows, as few times as SQLite's bound-parameter limit allows: `$` becomes
 * `(?, ?), (?, ?)…` for rows of several values, or `?, ?…` for rows of one.
 */
export function execChunked(sql: SqlStorage, query: string, rows: unknown[][], onRow?: (row: Record<string, SqlStorageValue>) => void): void {
  if (rows.length === 0) return;
  const width = rows[0]!.length;
  const per = Math.max(1, Math.floor(MAX_BOUND_PARAMS / width));
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const tuple = width === 1 ? "?" : `(${Array(width).fill("?").join(", ")})`;
    const cursor = sql.exec(query.replace("$", Array(chunk.length).fill(tuple).join(", ")), ...chunk.flat());
    for (const row of cursor) onRow?.(row);
  }
}
