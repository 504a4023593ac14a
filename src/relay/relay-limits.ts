import type { Env } from "../env";
import { SETTINGS, settings } from "../settings";

/** The defaults (src/settings.ts): a single event like a non-stream answer, 8 MiB; a stream 256 MiB and 25 minutes; 1 s after [DONE]. */
export const DEFAULT_MAX_EVENT_BYTES = SETTINGS.RELAY_MAX_EVENT_BYTES.fallback;
export const DEFAULT_MAX_STREAM_BYTES = SETTINGS.RELAY_MAX_STREAM_BYTES.fallback;
export const DEFAULT_MAX_STREAM_MS = SETTINGS.RELAY_MAX_STREAM_MS.fallback;
export const DEFAULT_AFTER_DONE_MS = SETTINGS.RELAY_AFTER_DONE_MS.fallback;

export type RelayLimits = { maxEventBytes: number; maxStreamBytes: number; maxStreamMs: number; afterDoneMs: number; pingMs: number; usageWaitMs: number };

/** The relay's limits from the Worker's vars; an unset or invalid value takes its default. */
export function relayLimits(env: Env): RelayLimits {
  const s = settings(env);
  return {
    maxEventBytes: s.RELAY_MAX_EVENT_BYTES,
    maxStreamBytes: s.RELAY_MAX_STREAM_BYTES,
    maxStreamMs: s.RELAY_MAX_STREAM_MS,
    afterDoneMs: s.RELAY_AFTER_DONE_MS,
    pingMs: s.RELAY_PING_MS,
    usageWaitMs: s.RELAY_USAGE_WAIT_MS,
  };
}
