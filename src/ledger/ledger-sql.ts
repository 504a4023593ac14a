/**
 * The ledger Durable Object's own SQLite schema (one database per account). See README "Storage".
 * Idempotent: runs in every constructor.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS account (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  credits_nano INTEGER NOT NULL DEFAULT 0,
  usage_nano INTEGER NOT NULL DEFAULT 0,
  granted INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO account (id) VALUES (1);
CREATE TABLE IF NOT EXISTS holds (
  gen_id TEXT PRIMARY KEY,
  key_hash TEXT NOT NULL,
  amount_nano INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS key_usage (
  key_hash TEXT NOT NULL,
  day TEXT NOT NULL,
  usage_nano INTEGER NOT NULL,
  PRIMARY KEY (key_hash, day)
);
CREATE TABLE IF NOT EXISTS debits (
  gen_id TEXT PRIMARY KEY,
  key_hash TEXT NOT NULL,
  cost_nano INTEGER NOT NULL,
  settled_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
  gen_id TEXT PRIMARY KEY,
  record TEXT NOT NULL
);
`;

export function migrateLedger(sql: SqlStorage): void {
  sql.exec(SCHEMA);
}
