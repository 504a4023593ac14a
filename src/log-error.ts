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
