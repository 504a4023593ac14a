/**
 * The D1 side of storing a ledger's record batch (src/generations/store-batches.ts): its parts' index rows
 * in `archive_parts` (one per UTC day the batch spans), the hourly rollups in `record_rollups`, endpoint
 * health's minute rollups, and the dead-letter count in `dead_record_batches`. Each step is safe to repeat: a batch is claimed, written and
 * committed however often it arrives, and its sums are added only by the one transaction that commits it.
 */
import { attemptRollupStatements } from "./endpoint-minutes";

/** What one part of a batch will hold, before it is written. */
export type BatchPart = {
  accountId: string;
  day: string;
  batch: string;
  key: string;
  records: number;
  bytes: number;
  sha256: string;
  firstAt: number;
  lastAt: number;
  costNano: number;
};

/** A part's claim: its number within the day and whether an earlier delivery already committed it. */
export type PartClaim = { part: number; archived: boolean };

/** The part's row, `writing`, numbered after the day's last part; nothing when the batch already has its row for the day. */
const CLAIM_SQL = `INSERT INTO archive_parts (account_id, day, part, key, state, records, bytes, sha256, first_at, last_at, cost_nano, written_at, batch)
  SELECT ?1, ?2, coalesce((SELECT max(part) + 1 FROM archive_parts WHERE account_id = ?1 AND day = ?2), 0), ?3, 'writing', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11
  WHERE NOT EXISTS (SELECT 1 FROM archive_parts WHERE account_id = ?1 AND day = ?2 AND batch = ?11)
  ON CONFLICT DO NOTHING`;
const CLAIMED_SQL = "SELECT part, state FROM archive_parts WHERE account_id = ?1 AND day = ?2 AND batch = ?3";

/** Claims the batch's parts (one D1 batch): each one's number, and whether it is already stored. */
export async function claimParts(d1: D1Database, parts: readonly BatchPart[], now: number): Promise<PartClaim[]> {
  const results = await d1.batch<{ part: number; state: string }>(
    parts.flatMap((p) => [
      d1.prepare(CLAIM_SQL).bind(p.accountId, p.day, p.key, p.records, p.bytes, p.sha256, p.firstAt, p.lastAt, p.costNano, now, p.batch),
      d1.prepare(CLAIMED_SQL).bind(p.accountId, p.day, p.batch),
    ]),
  );
  return parts.map((p, i) => {
    const row = results[2 * i + 1]?.results[0];
    // A lost race for the day's next number (another batch took it in between) leaves no row: claimed again next delivery.
    if (!row) throw new Error(`records store: the part of batch ${p.batch} for ${p.day} could not be numbered; the batch is retried`);
    return { part: Number(row.part), archived: row.state === "archived" };
  });
}

/**
 * True only inside the transaction whose first statement committed the batch's part: its account, day,
 * batch and commit id bound as ?first … ?first+3. Every sum a commit adds is guarded by it.
 */
export function batchPartCommitted(first: number): string {
  const [a, d, b, c] = [0, 1, 2, 3].map((i) => `?${first + i}`);
  return `EXISTS (SELECT 1 FROM archive_parts WHERE account_id = ${a} AND day = ${d} AND batch = ${b} AND state = 'archived' AND commit_id = ${c})`;
}
const THIS_COMMIT = batchPartCommitted(1);
const COMMIT_SQL =
  "UPDATE archive_parts SET state = 'archived', archived_at = ?5, commit_id = ?4 WHERE account_id = ?1 AND day = ?2 AND batch = ?3 AND state = 'writing'";
/** ?5: a JSON array of [hour, model, key hash, carrier or "", API, requests, prompt, completion, cached, cache write, cost]. */
const ROLLUP_SQL = `INSERT INTO record_rollups (account_id, hour, model, key_hash, provider_name, inbound_api, requests, tokens_prompt, tokens_completion, tokens_cached, tokens_cache_write, cost_nano)
  SELECT ?1, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10
  FROM json_each(?5) WHERE ${THIS_COMMIT}
  ON CONFLICT (account_id, hour, model, key_hash, provider_name, inbound_api) DO UPDATE SET
    requests = requests + excluded.requests, tokens_prompt = tokens_prompt + excluded.tokens_prompt,
    tokens_completion = tokens_completion + excluded.tokens_completion, tokens_cached = tokens_cached + excluded.tokens_cached,
    tokens_cache_write = tokens_cache_write + excluded.tokens_cache_write, cost_nano = cost_nano + excluded.cost_nano`;

/** One rollup row's change: the dimensions, then requests, tokens (prompt, completion, cached, cache write) and cost. */
export type RollupDelta = [
  hour: number,
  model: string,
  keyHash: string,
  provider: string,
  api: string,
  ...sums: [number, number, number, number, number, number],
];

/** A part to commit: its claim, its rollup changes and its records' JSON (for their carrier attempts' minute rollups). */
export type PartCommit = { part: BatchPart; rollups: RollupDelta[]; recordsJson: string };

/**
 * Commits the batch's parts in one D1 batch (one transaction): each part still `writing` is marked
 * archived under a fresh commit id, and only then, in the same transaction, its rollups and its carrier
 * attempts' minute rollups are added; the batch leaves the dead letters. Returns how many parts this call committed (0: an earlier one had).
 */
export async function commitParts(d1: D1Database, commits: readonly PartCommit[], now: number): Promise<number> {
  const commitId = crypto.randomUUID();
  const statements: D1PreparedStatement[] = [];
  const commitAt: number[] = []; // where each part's COMMIT_SQL is in the batch
  for (const { part: p, rollups, recordsJson } of commits) {
    commitAt.push(statements.length);
    statements.push(
      d1.prepare(COMMIT_SQL).bind(p.accountId, p.day, p.batch, commitId, now),
      d1.prepare(ROLLUP_SQL).bind(p.accountId, p.day, p.batch, commitId, JSON.stringify(rollups)),
      // Endpoint health's minute rollups: counted by this commit only, like the rollups above.
      ...attemptRollupStatements(d1, recordsJson, {
        sql: batchPartCommitted(2), // the records' JSON is ?1
        params: [p.accountId, p.day, p.batch, commitId],
      }),
    );
  }
  const batch = commits[0]?.part.batch;
  if (batch !== undefined) statements.push(d1.prepare("DELETE FROM dead_record_batches WHERE batch = ?1").bind(batch));
  const results = await d1.batch(statements);
  return commitAt.filter((i) => results[i]!.meta.changes === 1).length;
}

/** A batch the queue gave up on (its dead letter): counted, so the admin sees it until it is stored. */
export async function countDeadBatch(d1: D1Database, accountId: string, batch: string, records: number, now: number): Promise<void> {
  await d1
    .prepare(
      `INSERT INTO dead_record_batches (batch, account_id, records, times, last_at) VALUES (?1, ?2, ?3, 1, ?4)
       ON CONFLICT (batch) DO UPDATE SET times = times + 1, last_at = ?4, records = ?3`,
    )
    .bind(batch, accountId, records, now)
    .run();
}
