import { between, count } from "./spec";

/** Cached answers (docs/caching.md): how long an entry lives, how large one may be, how much one account keeps. */
export const ANSWER_CACHE_SETTINGS = {
  ANSWER_CACHE_DEFAULT_TTL_S: between(
    1,
    86_400,
    count(300, "how long a cached answer is served, in seconds, when the request (`X-OpenRouter-Cache-TTL`) names no TTL"),
  ),
  ANSWER_CACHE_MAX_TTL_S: between(
    1,
    86_400,
    count(86_400, "the longest TTL a request may ask for (`X-OpenRouter-Cache-TTL`), in seconds; a larger one is a 400", "86400 = 1 day"),
  ),
  ANSWER_CACHE_MAX_ENTRY_BYTES: between(
    1_024,
    24 * 1024 * 1024,
    count(
      1024 * 1024,
      "largest answer kept in the cache, as its canonical JSON (or stream events) before compression, in bytes: a larger answer is served and charged as usual but not stored",
      "1048576 = 1 MiB",
    ),
  ),
  ANSWER_CACHE_ACCOUNT_MAX_BYTES: count(
    64 * 1024 * 1024,
    "most bytes of cached answers (compressed) one account keeps: a store past it evicts the account's oldest entries",
    "67108864 = 64 MiB",
  ),
  ANSWER_CACHE_ACCOUNT_MAX_ENTRIES: count(10_000, "most cached answers one account keeps: a store past it evicts the account's oldest entries"),
};
