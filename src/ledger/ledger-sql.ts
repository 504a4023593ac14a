/**
 * The ledger Durable Object's own SQLite schema (one database per account). See docs/storage.md.
 * Steps run in order, once each; `ledger_migrations` remembers how many have run.
 */

/** The step that rebuilds `debits` with a sequence and a record (see its comment in STEPS); it runs again harmlessly. */
function debitRecords(sql: SqlStorage): void {
  const has = (table: string, column: string) => sql.exec("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", table, column).toArray().length > 0;
  if (!has("debits", "seq"))
    sql.exec(`CREATE TABLE debits_seq (
      seq INTEGER PRIMARY KEY,
      gen_id TEXT NOT NULL UNIQUE,
      key_hash TEXT NOT NULL,
      cost_nano INTEGER NOT NULL,
      settled_at INTEGER NOT NULL,
      record TEXT,
      replaced TEXT
    );
    INSERT INTO debits_seq (seq, gen_id, key_hash, cost_nano, settled_at)
      SELECT rowid - (SELECT coalesce(max(rowid), 0) FROM debits), gen_id, key_hash, cost_nano, settled_at FROM debits ORDER BY rowid;
    DROP TABLE debits;
    ALTER TABLE debits_seq RENAME TO debits;`);
  if (!has("outbox_state", "flush_delay_ms")) sql.exec("ALTER TABLE outbox_state ADD COLUMN flush_delay_ms INTEGER");
}

/**
 * BYOK usage (docs/byok.md, Money): what carriers charged the account's own keys for each key's requests, per UTC
 * day beside what the key was debited; and what a hold reserves of its key's limit when that differs from what it
 * reserves of the balance (a key counting BYOK usage holds the carrier's whole bill; NULL = amount_nano). Guarded:
 * it runs again harmlessly.
 */
function byokUsage(sql: SqlStorage): void {
  const has = (table: string, column: string) => sql.exec("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", table, column).toArray().length > 0;
  if (!has("key_usage", "byok_nano")) sql.exec("ALTER TABLE key_usage ADD COLUMN byok_nano INTEGER NOT NULL DEFAULT 0");
  if (!has("holds", "key_amount_nano")) sql.exec("ALTER TABLE holds ADD COLUMN key_amount_nano INTEGER");
}

const STEPS: Array<string | ((sql: SqlStorage) => void)> = [
  `CREATE TABLE account (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    credits_nano INTEGER NOT NULL DEFAULT 0,
    usage_nano INTEGER NOT NULL DEFAULT 0,
    granted INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO account (id) VALUES (1);
  CREATE TABLE holds (
    gen_id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,
    amount_nano INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE key_usage (
    key_hash TEXT NOT NULL,
    day TEXT NOT NULL,
    usage_nano INTEGER NOT NULL,
    PRIMARY KEY (key_hash, day)
  );
  CREATE TABLE debits (
    gen_id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,
    cost_nano INTEGER NOT NULL,
    settled_at INTEGER NOT NULL
  );
  CREATE TABLE outbox (
    gen_id TEXT PRIMARY KEY,
    record TEXT NOT NULL
  );`,
  // The record to write should the request die without settling (the alarm writes it on expiry).
  `ALTER TABLE holds ADD COLUMN record TEXT;`,
  // Every credit grant, once per id: credits_nano = Σ amount_nano. Credits granted before this table existed become one grant.
  `CREATE TABLE grants (
    grant_id TEXT PRIMARY KEY,
    amount_nano INTEGER NOT NULL,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  INSERT INTO grants (grant_id, amount_nano, source, created_at)
    SELECT 'legacy-credits', credits_nano, 'before-grant-ids', CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM account WHERE credits_nano > 0;`,
  // Isolate slices get their own table (they were holds without a record), with what their isolate reported:
  // how many requests it admitted from the slice, how many of those settled here, whether it released it.
  // Holds and slices are renewed while their requests run (renewed_at). slice_audit keeps slices that
  // ended with admitted requests never settled here.
  `CREATE TABLE slices (
    lease_id TEXT PRIMARY KEY,
    amount_nano INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    renewed_at INTEGER NOT NULL,
    admitted INTEGER NOT NULL DEFAULT 0,
    settled INTEGER NOT NULL DEFAULT 0,
    released_at INTEGER
  );
  INSERT INTO slices (lease_id, amount_nano, created_at, renewed_at) SELECT gen_id, amount_nano, created_at, created_at FROM holds WHERE record IS NULL;
  DELETE FROM holds WHERE record IS NULL;
  ALTER TABLE holds ADD COLUMN renewed_at INTEGER;
  UPDATE holds SET renewed_at = created_at;
  CREATE TABLE slice_audit (
    lease_id TEXT PRIMARY KEY,
    admitted INTEGER NOT NULL,
    settled INTEGER NOT NULL,
    ended_at INTEGER NOT NULL,
    ended TEXT NOT NULL
  );`,
  // Free-model rate limits: when each free request of the last minute was admitted (a sliding window,
  // at most the per-minute limit of rows), and free requests admitted per UTC day (the last 7 days kept).
  `CREATE TABLE free_minute (at INTEGER NOT NULL);
  CREATE INDEX free_minute_at ON free_minute (at);
  CREATE TABLE free_days (
    day TEXT PRIMARY KEY,
    count INTEGER NOT NULL
  );`,
  // The request each free admission counted, so a request that a priced endpoint served in the end gives its slot back.
  `ALTER TABLE free_minute ADD COLUMN gen_id TEXT;
  CREATE INDEX free_minute_gen ON free_minute (gen_id);`,
  // What was taken back of a grant (a payment refunded or disputed): credits_nano = Σ grants − Σ reversals.
  `CREATE TABLE reversals (
    reversal_id TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    amount_nano INTEGER NOT NULL,
    final INTEGER NOT NULL,
    source TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX reversals_grant ON reversals (grant_id);`,
  // The outbox gets a sequence number that is never reused: a flush deletes what it copied with one
  // range (seq <= the last copied), and a record replaced meanwhile (a late settle) has a larger one.
  `CREATE TABLE outbox_seq (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    gen_id TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL
  );
  INSERT INTO outbox_seq (gen_id, record) SELECT gen_id, record FROM outbox ORDER BY rowid;
  DROP TABLE outbox;
  ALTER TABLE outbox_seq RENAME TO outbox;`,
  // What an isolate gave back of a slice it retired with requests still in flight (cumulative, so a
  // repeated report returns nothing twice): the slice keeps only what those requests hold.
  `ALTER TABLE slices ADD COLUMN returned_nano INTEGER NOT NULL DEFAULT 0;`,
  // One reversal per grant, set to the total its charge's state says (refunds + withheld disputes) with
  // when that state was read (observed_at: an older reading never overwrites a newer one). The rows of
  // earlier deployments (one per refund and per dispute) fold into their grant's: the same sum, so
  // credits_nano = Σ grants − Σ reversals still holds; observed_at 0, so the next reading replaces them.
  `CREATE TABLE grant_reversals (
    grant_id TEXT PRIMARY KEY,
    amount_nano INTEGER NOT NULL,
    observed_at INTEGER NOT NULL,
    source TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  INSERT INTO grant_reversals (grant_id, amount_nano, observed_at, source, updated_at)
    SELECT grant_id, SUM(amount_nano), 0, group_concat(DISTINCT source), MAX(updated_at) FROM reversals GROUP BY grant_id;
  DROP TABLE reversals;
  ALTER TABLE grant_reversals RENAME TO reversals;`,
  // Records leave in batches for the records queue (src/ledger/records-outbox.ts). A row is written once and
  // deleted once; its seq comes from outbox_state.next_seq, taken once per settle batch (AUTOINCREMENT would
  // write its sqlite_sequence row per record), and never goes back. A batch is a range of rows in
  // record_batches, numbered by outbox_state.next_batch, which never goes back either: a batch id is never reused. A generation may have two rows (an abandoned record already batched, and the settle
  // that replaces it). abandoned_ids: abandoned records (kept a week), so a settle arriving later is known
  // to replace one, and which. Written to run again harmlessly (a test replays the steps from an earlier one).
  `CREATE TABLE outbox_rows (
    seq INTEGER PRIMARY KEY,
    gen_id TEXT NOT NULL,
    record TEXT NOT NULL,
    abandoned INTEGER NOT NULL DEFAULT 0,
    replaced TEXT
  );
  INSERT INTO outbox_rows (seq, gen_id, record) SELECT seq, gen_id, record FROM outbox ORDER BY seq;
  DROP TABLE outbox;
  ALTER TABLE outbox_rows RENAME TO outbox;
  CREATE INDEX IF NOT EXISTS outbox_gen ON outbox (gen_id);
  CREATE TABLE IF NOT EXISTS record_batches (batch TEXT PRIMARY KEY, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, sent_at INTEGER);
  CREATE TABLE IF NOT EXISTS outbox_state (id INTEGER PRIMARY KEY CHECK (id = 1), next_seq INTEGER NOT NULL, assigned_upto INTEGER NOT NULL, next_batch INTEGER NOT NULL);
  INSERT OR IGNORE INTO outbox_state (id, next_seq, assigned_upto, next_batch) SELECT 1, coalesce(max(seq), 0) + 1, 0, 1 FROM outbox;
  CREATE TABLE IF NOT EXISTS abandoned_ids (gen_id TEXT PRIMARY KEY, at INTEGER NOT NULL, record TEXT NOT NULL);`,
  // A settled request's record rides in its debit, the row the settle writes anyway (records-outbox.ts):
  // debits get the account's sequence number as their rowid (seq: a batch is a range of it, read without
  // an index) with the record and the abandoned record it replaces. The outbox keeps abandoned records, and
  // the rows written before this step, which go as they were (in the same sequence). Debits of earlier
  // deployments carry no record: their seq is ≤ 0, below every batch, in their order (pruning walks it).
  // flush_delay_ms: the account's flush delay now (record-batches.ts), NULL = RECORDS_FLUSH_DELAY_MS.
  debitRecords,
  // Budget alerts (src/ledger/object/alerts.ts): the account's thresholds ('account': balance amounts in nano-USD;
  // a key hash: percents of its limit), and every alert fired — its memory (unique per subject, threshold
  // and window: a key's threshold fires once per window) and its outbox (sent_at NULL until the queue has it).
  `CREATE TABLE IF NOT EXISTS alert_rules (subject TEXT PRIMARY KEY, thresholds TEXT NOT NULL, updated_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS alerts_fired (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    threshold INTEGER NOT NULL,
    window TEXT NOT NULL,
    fired_at INTEGER NOT NULL,
    event TEXT NOT NULL,
    sent_at INTEGER,
    UNIQUE (subject, threshold, window)
  );
  CREATE INDEX IF NOT EXISTS alerts_fired_at ON alerts_fired (fired_at);`,
  // BYOK requests settled per UTC month (`YYYY-MM`): the first BYOK_FREE_REQUESTS_PER_MONTH pay no fee (object/byok-allowance.ts).
  `CREATE TABLE IF NOT EXISTS byok_months (month TEXT PRIMARY KEY, requests INTEGER NOT NULL);`,
  // Each key's BYOK usage per UTC day (key_usage.byok_nano), and the hold a key counting it reserves of its limit (holds.key_amount_nano).
  byokUsage,
];

/** The step that folds earlier deployments' reversal rows into one per grant (a test replays from it over old rows). */
export const REVERSALS_STEP = STEPS.findIndex((s) => typeof s === "string" && s.includes("CREATE TABLE grant_reversals"));
/** The step that puts records in their debits (a test upgrades a ledger with outbox rows of the layout before it). */
export const DEBIT_RECORDS_STEP = STEPS.indexOf(debitRecords);

/** Runs the steps not yet run, up to `upto` (all of them unless a test stops earlier). */
export function migrateLedger(sql: SqlStorage, upto = STEPS.length): void {
  sql.exec("CREATE TABLE IF NOT EXISTS ledger_migrations (id INTEGER PRIMARY KEY CHECK (id = 1), done INTEGER NOT NULL)");
  sql.exec("INSERT OR IGNORE INTO ledger_migrations (id, done) VALUES (1, 0)");
  const done = sql.exec<{ done: number }>("SELECT done FROM ledger_migrations").one().done;
  for (let i = done; i < upto; i++) {
    const step = STEPS[i]!;
    if (typeof step === "string") sql.exec(step);
    else step(sql);
    sql.exec("UPDATE ledger_migrations SET done = ?", i + 1);
  }
}
