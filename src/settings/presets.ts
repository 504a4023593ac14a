import { count } from "./spec";

/** Presets (docs/teams.md#presets): how long an isolate keeps one, and how many and how large they may be. */
export const PRESET_SETTINGS = {
  PRESET_CACHE_MS: count(
    10_000,
    "how long an isolate keeps a preset version it read, ms: a save made in another isolate is applied by `@preset/<slug>` within this time (at once in the isolate that saved it)",
  ),
  PRESETS_PER_ACCOUNT: count(200, "most presets one account may have (`POST /presets` and the console refuse another with a 400)"),
  PRESET_VERSIONS_PER_PRESET: count(1_000, "most versions one preset may have (a save past it is a 400: delete the preset and create it again)"),
  PRESET_MAX_BYTES: count(64 * 1024, "largest preset version, its config and system prompt as JSON, in bytes (413 above it)", "65536 = 64 KiB"),
};
