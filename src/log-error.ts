/**
 * The service's log lines, by level: wrangler and Cloudflare show console.error as an error (red `✘ [ERROR]`
 * locally), console.warn as a warning, console.log as information — so what went as it should is never logged
 * as an error, and an error line always means something failed.
 */

/**
 * Logs a failure by where it happened and the error's kind (its class name) only. Never its message:
 * a driver error's message carries the query and its parameters (emails, key and session hashes),
 * and other messages may echo request data. `detail` is for values known to be safe (ids, counts).
 */
export function logError(where: string, err: unknown, detail: Record<string, string | number> = {}): void {
  console.error(where, { error: err instanceof Error ? err.name : typeof err, ...detail });
}

/** Logs something that went wrong without an exception at hand, with values known to be safe (ids, counts, amounts). */
export function logEvent(what: string, detail: Record<string, string | number> = {}): void {
  console.error(what, detail);
}

/** Logs something that did not fail but wants a look (a setting ignored, a limit nearing, work put off to the next run). */
export function logWarning(what: string, detail: Record<string, string | number> = {}): void {
  console.warn(what, detail);
}

/** Logs something that went as it should and is worth a line (a payment granted, records compacted). */
export function logInfo(what: string, detail: Record<string, string | number> = {}): void {
  console.log(what, detail);
}
