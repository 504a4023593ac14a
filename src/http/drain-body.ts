import { createMiddleware } from "hono/factory";
import type { Env } from "../env";
import type { Settings } from "../settings";

/**
 * Reads and discards what is left of a body, at most `maxBytes` for at most `maxMs`, then cancels the
 * rest. Returns true when it reached the end. A body another reader holds (or already consumed and
 * locked) is left alone.
 */
export async function drainBody(body: ReadableStream<Uint8Array>, maxBytes: number, maxMs: number): Promise<boolean> {
  // The common case (a handler read the body with text()/json(), which keeps it locked), without the
  // exception getReader() would throw: an exception costs more than the rest of this middleware.
  if (body.locked) return false;
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = body.getReader();
  } catch {
    return false;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => (timer = setTimeout(() => resolve("expired"), maxMs)));
  let drained = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === "expired") break;
      if (next.done) return true;
      drained += next.value.byteLength;
      if (drained > maxBytes) break;
    }
  } catch {
    return false; // the client went away
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  await reader.cancel().catch(() => {});
  return false;
}

/**
 * Answers only once the request body has been read. workerd closes a connection whose request body
 * was not read to the end, and a close with unread bytes in the socket resets it: the client (or
 * wrangler dev's proxy, which then answers 503 "Your worker restarted mid-request") loses our answer —
 * a 413 for an oversized body, a 401 for a body sent with a bad key. So whatever a handler left unread
 * is drained here, bounded in bytes and time; a body declared larger than the bound is not read at all.
 */
export const drainUnreadBody = createMiddleware<{ Bindings: Env; Variables: { settings: Settings } }>(async (c, next) => {
  const body = c.req.raw.body; // before next(): a middleware may replace c.req.raw
  await next();
  if (!body) return;
  const { BODY_DRAIN_MAX_BYTES: maxBytes, BODY_DRAIN_MAX_MS: maxMs } = c.var.settings;
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await body.cancel().catch(() => {});
    return;
  }
  await drainBody(body, maxBytes, maxMs);
});
