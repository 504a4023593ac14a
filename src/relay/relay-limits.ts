import { SETTINGS, type Settings } from "../settings";

/** The defaults (src/settings.ts): a single event like a non-stream answer, 8 MiB; a stream 256 MiB and 25 minutes; 1 s after [DONE]. */
export const DEFAULT_MAX_EVENT_BYTES = SETTINGS.RELAY_MAX_EVENT_BYTES.fallback;
export const DEFAULT_MAX_STREAM_BYTES = SETTINGS.RELAY_MAX_STREAM_BYTES.fallback;
export const DEFAULT_MAX_STREAM_MS = SETTINGS.RELAY_MAX_STREAM_MS.fallback;
export const DEFAULT_AFTER_DONE_MS = SETTINGS.RELAY_AFTER_DONE_MS.fallback;

export type RelayLimits = { maxEventBytes: number; maxStreamBytes: number; maxStreamMs: number; afterDoneMs: number; pingMs: number; usageWaitMs: number };

/** The settings the relay's limits come from (read once where the request opened). */
export type RelaySettings = Pick<
  Settings,
  "RELAY_MAX_EVENT_BYTES" | "RELAY_MAX_STREAM_BYTES" | "RELAY_MAX_STREAM_MS" | "RELAY_AFTER_DONE_MS" | "RELAY_PING_MS" | "RELAY_USAGE_WAIT_MS"
>;

/** The relay's limits from the request's settings; an unset or invalid value took its default there. */
export function relayLimits(s: RelaySettings): RelayLimits {
  return {
    maxEventBytes: s.RELAY_MAX_EVENT_BYTES,
    maxStreamBytes: s.RELAY_MAX_STREAM_BYTES,
    maxStreamMs: s.RELAY_MAX_STREAM_MS,
    afterDoneMs: s.RELAY_AFTER_DONE_MS,
    pingMs: s.RELAY_PING_MS,
    usageWaitMs: s.RELAY_USAGE_WAIT_MS,
  };
}
