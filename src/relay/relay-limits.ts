import type { Env } from "../env";
import { positiveIntVar } from "../config";

/** Largest single stream event relayed, in bytes (RELAY_MAX_EVENT_BYTES): like a non-stream answer. */
export const DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024;
/** Most bytes one carrier stream may send (RELAY_MAX_STREAM_BYTES). */
export const DEFAULT_MAX_STREAM_BYTES = 256 * 1024 * 1024;
/** Longest a stream may run from the request's arrival (RELAY_MAX_STREAM_MS). */
export const DEFAULT_MAX_STREAM_MS = 25 * 60_000;

/** How long, after a carrier's [DONE], its body may take to end (RELAY_AFTER_DONE_MS) before it is cut off. */
export const DEFAULT_AFTER_DONE_MS = 1_000;

export type RelayLimits = { maxEventBytes: number; maxStreamBytes: number; maxStreamMs: number; afterDoneMs: number };

/** The relay's limits from the Worker's vars; an unset or invalid value takes its default. */
export function relayLimits(env: Env): RelayLimits {
  return {
    maxEventBytes: positiveIntVar(env.RELAY_MAX_EVENT_BYTES, DEFAULT_MAX_EVENT_BYTES),
    maxStreamBytes: positiveIntVar(env.RELAY_MAX_STREAM_BYTES, DEFAULT_MAX_STREAM_BYTES),
    maxStreamMs: positiveIntVar(env.RELAY_MAX_STREAM_MS, DEFAULT_MAX_STREAM_MS),
    afterDoneMs: positiveIntVar(env.RELAY_AFTER_DONE_MS, DEFAULT_AFTER_DONE_MS),
  };
}
