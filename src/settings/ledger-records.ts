import { count, between } from "./spec";

/** The ledger (leases, holds, settles) and the generation records (their queue, retention, archive, D1's size). */
export const LEDGER_RECORDS_SETTINGS = {
  LEDGER_LEASE_TTL_MS: count(
    120_000,
    "how long a slice lives without a renewal before the ledger expires it (its isolate died); requests renew every quarter of it, ms",
  ),
  LEDGER_HOLD_TTL_MS: count(1_800_000, "the same for a request's own hold, and for a released slice still missing settles, ms (at least the lease TTL)"),
  SETTLE_RETRY_BUDGET_MS: count(
    25_000,
    "how long an isolate retries a settle batch before it hands it to the settle queue, ms (keep it under waitUntil's 30 s)",
  ),
  SETTLE_WINDOW_MS: count(20, "a settle batch (per account and isolate) is sent this long after the settle that opened it; settles meanwhile join it, ms"),
  SETTLE_ATTEMPT_TIMEOUT_MS: count(
    5_000,
    "one settle RPC the ledger has not answered within this long is given up, logged (`ledger did not answer a settle batch within … ms`, with its generation ids and amounts) and retried; settles are idempotent, so one that lands late applies once; each attempt is also cut to what is left of the retry budget, ms",
  ),
  RECORDS_FLUSH_DELAY_MS: count(
    1_000,
    "how soon after a settle an account's ledger sends its new generation records to the records queue (batches for all settled meanwhile) at least: the delay grows for quiet accounts up to RECORDS_FLUSH_MAX_DELAY_MS, ms",
  ),
  RECORDS_FLUSH_MAX_DELAY_MS: between(
    1,
    3_600_000,
    count(
      600_000,
      "the longest an account's flush delay grows to: each flush scales the delay by RECORDS_FLUSH_TARGET_RECORDS ÷ the records it sent, between RECORDS_FLUSH_DELAY_MS and this, so quiet accounts send larger batches (a batch costs about the same whatever its size). A record reaches R2 within this (plus the queue's batch timeout and the consumer's time); `/generation` reads it from the ledger meanwhile, ms. Equal to RECORDS_FLUSH_DELAY_MS: a fixed delay",
    ),
  ),
  RECORDS_FLUSH_TARGET_RECORDS: between(
    1,
    10_000,
    count(
      60,
      "records an account's flush aims at (see RECORDS_FLUSH_MAX_DELAY_MS); as many waiting go at once, whatever the delay: ≈ 1 KB each, 60 make one queue message under 64 KB (3 queue operations; 6 above)",
    ),
  ),
  LEDGER_RECORDS_KEEP_BYTES: count(
    5_000_000_000,
    "a settled request's record rides in its debit, kept 7 days for exactly-once settles (≈ 1.1 KB each): past this size of an account's ledger database (Cloudflare's limit: 10 GB an object), its hourly prune drops the records of debits already stored (one SQLite row written each), keeping the debits, bytes",
    "5000000000 = 5 GB",
  ),
  RECORDS_FLUSH_BATCH: count(
    500,
    "most records one alarm of the ledger sends to the records queue; more go at once by the next alarm. They travel in batches of at most 100 KB of records (one queue message each)",
  ),
  RECORDS_ACK_TIMEOUT_MS: count(
    60_000,
    "a record batch the records store has not acknowledged this long after the ledger sent it is sent again (the same batch: stored once however often it arrives), ms",
  ),
  RECORDS_RETENTION_DAYS: between(
    2,
    36_500,
    count(
      30,
      "generation records older than this many UTC days (counted from the start of today) leave D1 for the R2 archive, once archived and verified (docs/storage.md); at least 2, so the activity page's 48-hour view reads D1 only",
    ),
  ),
  RECORDS_ARCHIVE_PART_RECORDS: between(
    100,
    40_000,
    count(10_000, "most records in one archive object (a part of an account's UTC day); a larger day is written as several parts"),
  ),
  RECORDS_ARCHIVE_PARTS_PER_RUN: between(1, 1_000_000, count(5_000, "most archive objects one Cron Trigger run (once a minute) writes")),
  RECORDS_ARCHIVE_RUN_MS: between(
    1_000,
    600_000,
    count(40_000, "a Cron Trigger run starts no archive part after this long, ms (runs are a minute apart; one still running when the next starts is safe)"),
  ),
  RECORDS_ARCHIVE_CONCURRENCY: between(1, 16, count(4, "account-days one archive run works on at once (each a part at a time)")),
  RECORDS_COMPACT_AFTER_MS: between(
    1,
    86_400_000,
    count(
      600_000,
      "the records queue's small objects (under half of RECORDS_ARCHIVE_PART_RECORDS records) stored at least this long ago are merged, per account and UTC day, into objects of up to RECORDS_ARCHIVE_PART_RECORDS records by the Cron Trigger, ms: the index of parts stays small",
    ),
  ),
  RECORDS_COMPACT_DAYS_PER_RUN: between(1, 100_000, count(200, "most account-days one Cron Trigger run compacts (one merged object each)")),
  RECORDS_COMPACT_DELETE_AFTER_MS: between(
    60_000,
    604_800_000,
    count(3_600_000, "objects merged away are deleted from R2 this long after the merge, ms (a reader that listed them just before still reads them)"),
  ),
  RECORDS_ARCHIVE_READS_PER_PAGE: between(
    1,
    100,
    count(8, "most archive objects one activity page or CSV step reads; a page that would need more ends early, with a link to the rest"),
  ),
  D1_SIZE_LIMIT_BYTES: count(
    10_000_000_000,
    "the D1 database's size limit (Cloudflare's: 10 GB a database on Workers Paid), for the audit and the warning below, bytes",
    "10000000000 = 10 GB",
  ),
  D1_SIZE_WARN_PERCENT: between(1, 100, count(80, "a log line (`d1 size warning`) each archive run while D1 is past this percent of that limit")),
};
